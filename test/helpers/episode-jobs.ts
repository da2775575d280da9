import { setTimeout as sleep } from 'node:timers/promises';
import { newEpisodeId, type EpisodeJob, type EpisodeResult } from '../../src/episode/episode-job.js';
import type { EpisodeQueue } from '../../src/queue/episode-queue.js';

/** Commit ids for queue tests that never open a repository: the queues carry them, nothing reads them. */
export const BASE = '0123456789abcdef0123456789abcdef01234567';
export const CANDIDATE = 'fedcba9876543210fedcba9876543210fedcba98';

/** A job of world `calc` on BASE, with a fresh episode id. */
export function job(task = 'add', attempt = 1): EpisodeJob {
  return { episodeId: newEpisodeId(), world: 'calc', task, attempt, base: BASE };
}

/** The result of `j` when its gate passed CANDIDATE. */
export function passed(j: EpisodeJob): EpisodeResult {
  return {
    episodeId: j.episodeId,
    task: j.task,
    attempt: j.attempt,
    base: j.base,
    candidate: CANDIDATE,
    verdict: 'passed',
    reason: null,
    message: null,
    signature: null,
  };
}

/** The next result, or 'nothing' when none comes within `ms`. */
export function nextWithin(queue: EpisodeQueue, ms: number): Promise<EpisodeResult | 'nothing'> {
  return Promise.race([queue.nextResult(), sleep(ms, 'nothing' as const)]);
}
