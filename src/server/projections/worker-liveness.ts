import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { hostname } from 'node:os';

/** Whether the worker that holds an episode is still there: known only for workers on this host. */
export type WorkerLiveness = 'alive' | 'gone' | 'unknown';

/** Answers the liveness of a worker name as `genesis run` writes it (`<hostname>:<pid>`). */
export type LivenessProbe = (worker: string) => WorkerLiveness;

/**
 * Checks a worker on this machine by signalling its pid with 0 (which tests existence without
 * sending anything). A worker on another host cannot be checked from here and is `unknown`; a
 * recycled pid can make a dead worker look alive, never the other way round.
 */
export function probeLocalWorker(worker: string, host: string = hostname()): WorkerLiveness {
  const at = worker.lastIndexOf(':');
  const pid = Number(worker.slice(at + 1));
  if (at <= 0 || worker.slice(0, at) !== host || !Number.isInteger(pid) || pid <= 0) return 'unknown';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'gone';
  }
}

/** A worker of the distributed queue, as its heartbeat in Redis describes it. */
export interface ClusterWorker {
  id: string;
  host: string;
  pid: number;
  concurrency: number;
  /** Episodes it runs now. */
  episodes: string[];
  /** Epoch milliseconds (Redis's clock) of its last heartbeat. */
  lastSeen: number;
}

/**
 * The records with each running episode named after the worker whose heartbeat holds it, and a
 * probe that answers `alive` for those workers. In a distributed run the scheduler opens the record
 * under its own name before the job goes out, and the worker writes its own only after its gate:
 * until then the registry is what knows who runs the episode. Records no heartbeat holds are kept
 * as they are (a local run, a worker gone quiet).
 */
export function withClusterHolders(
  records: readonly EpisodeRecord[],
  workers: readonly ClusterWorker[],
  probe: LivenessProbe,
): { records: EpisodeRecord[]; probe: LivenessProbe } {
  const holder = new Map(workers.flatMap((w) => w.episodes.map((episode) => [episode, w.id] as const)));
  const alive = new Set(workers.map((w) => w.id));
  return {
    records: records.map((r) => {
      const held = r.status === 'running' ? holder.get(r.id) : undefined;
      return held === undefined || held === r.worker ? r : { ...r, worker: held };
    }),
    probe: (worker) => (alive.has(worker) ? 'alive' : probe(worker)),
  };
}
