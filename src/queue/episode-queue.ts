import type { EpisodeJob, EpisodeResult } from '../episode/episode-job.js';

/**
 * The Queue port between the scheduler (which submits episode jobs and integrates results) and
 * the workers (which run them).
 *
 * Contract (test/integration/queue/episode-queue-contract.test.ts runs it against both adapters):
 * - `submit` is idempotent by `episodeId`: submitting the same job twice runs it once.
 * - Jobs and results are validated against their schemas on both sides of the queue.
 * - Every submitted job yields exactly one result from `nextResult`, also when its worker failed
 *   (verdict `failed`, reason `worker-error`) or the queue was closed under it (`abandoned`).
 * - A result stays owed until `acknowledge` is called for it: a durable adapter delivers it again
 *   after a crash of the consumer, so the integrator must treat results idempotently. The consumer
 *   acknowledges each result before it waits for the next: the BullMQ adapter hands them over one
 *   at a time, in the order the episodes finished.
 * - `ensureSubmitted` puts a job back when the queue lost it (a Redis restart without persistence);
 *   a job the queue still holds, or whose result is owed, is left alone.
 * - `cancel` stops one job, waiting or running, and its one result is still delivered.
 * - `close` stops taking jobs, aborts running ones (in-process) or leaves them to the workers
 *   (distributed), and resolves when nothing more will be delivered.
 */
export interface EpisodeQueue {
  submit(job: EpisodeJob): Promise<void>;
  /** The next finished episode, in completion order. */
  nextResult(): Promise<EpisodeResult>;
  acknowledge(episodeId: string): Promise<void>;
  ensureSubmitted(job: EpisodeJob): Promise<boolean>;
  /**
   * Stops one job (a racer whose race is decided): a waiting one does not start, a running one is
   * aborted (over BullMQ, at its worker's next look for stop requests); its result (abandoned) is
   * still delivered.
   */
  cancel(episodeId: string): Promise<void>;
  /**
   * Of these submitted jobs, those no worker has taken yet: a queue whose workers are elsewhere
   * says so, for the run to tell that they wait for a free worker. Absent: every job runs when
   * submitted (in process, the run starts no more than its pool runs).
   */
  notTaken?(episodeIds: readonly string[]): Promise<string[]>;
  /**
   * Of these submitted jobs, those a worker has taken, each with that worker, or null when it is
   * no longer alive (lost: the job is taken again once the queue finds it stalled). Absent: the
   * jobs run in this process, whose loss is the run's own.
   */
  holders?(episodeIds: readonly string[]): Promise<Map<string, string | null>>;
  close(): Promise<void>;
}

/** What a worker does with one job; `signal` aborts when the queue closes. */
export type EpisodeHandler = (job: EpisodeJob, signal: AbortSignal) => Promise<EpisodeResult>;
