import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ZodError } from 'zod';
import { episodeResultSchema, type EpisodeJob, type EpisodeResult } from '../../episode/episode-job.js';
import { closeWithin } from './close-within.js';
import { requestCancel } from './cancel-requests.js';
import { distributedJobSchema, EPISODE_QUEUE, queuePrefix, resultQueueOf, RETENTION } from './distributed-job.js';
import type { EpisodeQueue } from '../episode-queue.js';
import { listWorkers } from '../redis/worker-registry.js';
import { takerKey } from './job-consumer.js';
import { workerError } from '../memory/memory-queue.js';
import { lostJobEnd } from './stalled-jobs.js';

/** Results taken from Redis ahead of the scheduler's handling of them; each stays unacknowledged (and redelivered after a crash) until handled. */
const RESULTS_AT_ONCE = 32;

/**
 * The scheduler's side of the BullMQ adapter: episode jobs go to the shared `episodes` queue,
 * results come back on the world's own results queue. A result job stays active until the
 * integrator acknowledges it, so a scheduler that dies mid-integration gets it again on restart.
 */
export class BullmqEpisodeQueue implements EpisodeQueue {
  private readonly episodes: Queue;
  private readonly results: Queue;
  private readonly events: QueueEvents;
  private readonly consumer: Worker;
  private readonly delivered: EpisodeResult[] = [];
  private readonly takers: Array<(r: EpisodeResult) => void> = [];
  private readonly acks = new Map<string, () => void>();
  private readonly resultQueue: string;
  private readonly connections: Redis[];

  constructor(
    private readonly redis: Redis,
    private readonly where: { remote: string; worldKey: string; tips?: boolean },
    /** How soon a result taken by a scheduler that died is delivered again. @default 30 s */
    timing: { lockDurationMs?: number; stalledIntervalMs?: number } = {},
  ) {
    this.resultQueue = resultQueueOf(where.worldKey);
    this.connections = [redis.duplicate(), redis.duplicate()];
    this.episodes = new Queue(EPISODE_QUEUE, { connection: redis, prefix: queuePrefix() });
    this.results = new Queue(this.resultQueue, { connection: redis, prefix: queuePrefix() });
    // A job BullMQ gave up on (stalled too often, or refused as malformed) still owes a result.
    this.events = new QueueEvents(EPISODE_QUEUE, { connection: this.connections[0]!, prefix: queuePrefix() });
    this.events.on('failed', ({ jobId, failedReason }) => void this.reportLost(jobId, failedReason));
    this.consumer = new Worker(this.resultQueue, (job) => this.take(job), {
      connection: this.connections[1]!,
      prefix: queuePrefix(),
      // Results wait in this process for their acknowledgement, each still active (locked) in Redis: with one at a
      // time, a wave of results reached the scheduler one Redis round trip (finish, fetch the next) after another.
      concurrency: RESULTS_AT_ONCE,
      lockDuration: timing.lockDurationMs ?? 30_000,
      stalledInterval: timing.stalledIntervalMs ?? 30_000,
      // An interrupted scheduler leaves its result unacknowledged; it must never be dropped for that.
      maxStalledCount: 1_000_000,
      ...RETENTION,
    });
  }

  async submit(job: EpisodeJob): Promise<void> {
    const data = distributedJobSchema.parse({
      job,
      remote: this.where.remote,
      worldKey: this.where.worldKey,
      resultQueue: this.resultQueue,
      ...(this.where.tips ? { tips: true } : {}),
    });
    await this.episodes.add('episode', data, { jobId: job.episodeId, attempts: 1, ...RETENTION });
  }

  nextResult(): Promise<EpisodeResult> {
    const ready = this.delivered.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  async acknowledge(episodeId: string): Promise<void> {
    this.acks.get(episodeId)?.();
    this.acks.delete(episodeId);
  }

  async ensureSubmitted(job: EpisodeJob): Promise<boolean> {
    const known = (await this.episodes.getJob(job.episodeId)) ?? (await this.results.getJob(job.episodeId));
    if (known || this.acks.has(job.episodeId)) return false;
    await this.submit(job);
    return true;
  }

  /**
   * A worker cannot be reached once it took the job, so the request waits in Redis for it: the
   * worker that runs the job aborts it at its next look, the one that takes it later does not start
   * it. Either way its result (abandoned) comes back as any other.
   */
  async cancel(episodeId: string): Promise<void> {
    await requestCancel(this.redis, episodeId);
  }

  async notTaken(episodeIds: readonly string[]): Promise<string[]> {
    const states = await Promise.all(episodeIds.map((id) => this.episodes.getJobState(id).catch(() => 'unknown')));
    return episodeIds.filter((_, i) => states[i] === 'waiting' || states[i] === 'prioritized' || states[i] === 'delayed');
  }

  async holders(episodeIds: readonly string[]): Promise<Map<string, string | null>> {
    const states = await Promise.all(episodeIds.map((id) => this.episodes.getJobState(id).catch(() => 'unknown')));
    const active = episodeIds.filter((_, i) => states[i] === 'active');
    if (active.length === 0) return new Map();
    // The worker that took the job last noted itself as its taker; it is lost when its heartbeat,
    // which expires three beats after it died, is gone. A job not yet noted is left out (just taken).
    const [takers, alive] = await Promise.all([this.redis.mget(active.map(takerKey)), listWorkers(this.redis)]);
    const live = new Set(alive.map((w) => w.id));
    return new Map(active.flatMap((id, i) => (takers[i] ? [[id, live.has(takers[i]!) ? takers[i]! : null] as const] : [])));
  }

  /** Waiting and running episode jobs of every world on this Redis. */
  async counts(): Promise<Record<string, number>> {
    return this.episodes.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
  }

  async close(): Promise<void> {
    // Force: a result not yet acknowledged goes back to Redis and is delivered at the next start.
    // Bounded: while Redis restarts, BullMQ's close would wait for ever (see close-within.ts); then our connections are cut.
    await closeWithin(this.consumer.close(true).then(() => Promise.all([this.events.close(), this.episodes.close(), this.results.close()])));
    for (const c of this.connections) c.disconnect();
  }

  private async take(job: Job): Promise<void> {
    const parsed = episodeResultSchema.safeParse(job.data);
    // A malformed result still ends its episode, as the in-process queue ends it: a worker-error result.
    const result = parsed.success ? parsed.data : await this.malformed(String(job.id), parsed.error);
    if (!result) return; // it names no episode this scheduler sent: nothing to answer
    const acked = new Promise<void>((resolve) => this.acks.set(result.episodeId, resolve));
    const taker = this.takers.shift();
    if (taker) taker(result);
    else this.delivered.push(result);
    return acked;
  }

  private async malformed(episodeId: string, error: ZodError): Promise<EpisodeResult | null> {
    const sent = distributedJobSchema.safeParse((await this.episodes.getJob(episodeId))?.data);
    return sent.success && sent.data.resultQueue === this.resultQueue ? workerError(sent.data.job, error) : null;
  }

  private async reportLost(jobId: string, failedReason: string): Promise<void> {
    const job = await this.episodes.getJob(jobId);
    const parsed = distributedJobSchema.safeParse(job?.data);
    if (!parsed.success || parsed.data.resultQueue !== this.resultQueue) return;
    const { job: episode } = parsed.data;
    // Two workers in a row died or froze on it (a gate that runs one out of memory, input that hangs its event
    // loop): the next would too. Closed as a gate that kills the orchestrator twice is, and the task held.
    const end = lostJobEnd(failedReason, 'the episode');
    const result: EpisodeResult = {
      episodeId: episode.episodeId,
      task: episode.task,
      attempt: episode.attempt,
      base: episode.base,
      candidate: null,
      verdict: 'failed',
      reason: end.reason,
      message: end.message,
      signature: end.reason,
    };
    await this.results.add('result', result, { jobId: episode.episodeId, ...RETENTION });
  }
}
