import type { EpisodeJob, EpisodeResult } from '../episode/episode-job.js';

/**
 * The Queue port between the scheduler (which submits episode jobs and integrates results) and
 * the workers (which run them).
 *
 * Contract:
 * - `submit` is idempotent by `episodeId`: submitting the same job twice runs it once.
 * - Jobs and results are validated against their schemas on both sides of the queue.
 * - Every submitted job yields exactly one result from `nextResult`, also when its worker failed
 *   (verdict `failed`, reason `worker-error`) or the queue was closed under it (`abandoned`).
 * - `close` stops taking jobs, aborts running ones, and resolves when they have returned.
 */
export interface EpisodeQueue {
  submit(job: EpisodeJob): Promise<void>;
  /** The next finished episode, in completion order. */
  nextResult(): Promise<EpisodeResult>;
  /** Jobs waiting and running. */
  counts(): { waiting: number; active: number };
  close(): Promise<void>;
}

/** What a worker does with one job; `signal` aborts when the queue closes. */
export type EpisodeHandler = (job: EpisodeJob, signal: AbortSignal) => Promise<EpisodeResult>;
