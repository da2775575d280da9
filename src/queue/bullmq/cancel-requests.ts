import type { Redis } from 'ioredis';
import { queuePrefix } from './distributed-job.js';

/**
 * Stopping one episode job across the fleet. BullMQ cannot take back a job a worker has taken, so
 * the scheduler leaves a request in Redis (a key per job) and the worker that runs the job looks
 * for it while the job runs and aborts the episode's signal: the agent is stopped and its result
 * (abandoned) still goes back, as in process. A key, not a pub/sub message, so that a request made
 * while the worker was reconnecting, or before any worker took the job, is still seen.
 *
 * Keys: `<prefix>:episode-cancel:<episodeId>`, kept a day (longer than a job lives in the queue).
 */
const CANCEL_TTL_MS = 86_400_000;

function cancelKey(episodeId: string): string {
  return `${queuePrefix()}:episode-cancel:${episodeId}`;
}

/** Asks the worker running the job (or the next to take it) to stop it. */
export async function requestCancel(redis: Redis, episodeId: string): Promise<void> {
  await redis.set(cancelKey(episodeId), '1', 'PX', CANCEL_TTL_MS);
}

/** Which of these episodes were asked to stop; none when Redis cannot be asked now (the next look asks again). */
export async function cancelRequested(redis: Redis, episodeIds: readonly string[]): Promise<string[]> {
  if (episodeIds.length === 0) return [];
  const found = await redis.mget(...episodeIds.map(cancelKey)).catch(() => []);
  return episodeIds.filter((_, i) => found[i] != null);
}
