/** A wait a worker elsewhere tells its world's scheduler: the job (episode or verification) and what it waits on, null when it ended. */
export interface WorkerWait {
  id: string;
  task: string;
  what: string | null;
  /** The worker that waits. */
  worker: string;
}

/**
 * The port through which a distributed run learns the waits of its jobs on workers (a dependency
 * set being installed, a tip's baseline), so its own output, `genesis status --world` and the
 * dashboard tell them as they tell the waits of jobs in process. Waits are live news, not state:
 * one told while no scheduler listened is not told again.
 */
export interface WorkerWaitFeed {
  /** Calls `onWait` for each wait told from now on; the returned function stops listening. */
  watch(onWait: (wait: WorkerWait) => void): Promise<() => Promise<void>>;
}
