import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { verificationResultSchema, type VerificationJob, type VerificationResult } from '../verification-job.js';
import { failed, type VerificationQueue } from '../verification-queue.js';
import { closeWithin } from './close-within.js';
import { lostJobEnd } from './stalled-jobs.js';
import { distributedVerificationSchema, queuePrefix, RETENTION, VERIFICATION_QUEUE, verificationResultQueueOf } from './distributed-job.js';

/**
 * The scheduler's side of verification over BullMQ: speculative commits go to the shared
 * `verifications` queue, which every `genesis worker` takes from as it takes episodes, so gates
 * run where episodes run. A worker killed mid-gate has its job taken again after the stall
 * interval; a job BullMQ gave up on still yields a result: `poison-pill` when it stalled two
 * workers, as an episode's job is closed (see stalled-jobs.ts), else `worker-lost`. Job ids carry the
 * commit, so a restarted scheduler's rebuilt commits are verified afresh, never answered by an
 * earlier run's job.
 */
export class BullmqVerificationQueue implements VerificationQueue {
  private readonly jobs: Queue;
  private readonly results: Queue;
  private readonly events: QueueEvents;
  private readonly consumer: Worker;
  private readonly delivered: VerificationResult[] = [];
  private readonly takers: Array<(r: VerificationResult) => void> = [];
  private readonly resultQueue: string;
  private readonly connections: Redis[];
  private readonly submitted = new Map<string, string>();
  /** Jobs whose result has not come back yet, by job id: what `ensureSubmitted` puts back if Redis lost them. */
  private readonly owed = new Map<string, VerificationJob>();

  constructor(
    redis: Redis,
    private readonly where: { remote: string; worldKey: string },
    timing: { lockDurationMs?: number; stalledIntervalMs?: number } = {},
  ) {
    this.resultQueue = verificationResultQueueOf(where.worldKey);
    this.connections = [redis.duplicate(), redis.duplicate()];
    this.jobs = new Queue(VERIFICATION_QUEUE, { connection: redis, prefix: queuePrefix() });
    this.results = new Queue(this.resultQueue, { connection: redis, prefix: queuePrefix() });
    this.events = new QueueEvents(VERIFICATION_QUEUE, { connection: this.connections[0]!, prefix: queuePrefix() });
    this.events.on('failed', ({ jobId, failedReason }) => void this.reportLost(jobId, failedReason));
    this.consumer = new Worker(this.resultQueue, async (job: Job) => this.take(job), {
      connection: this.connections[1]!,
      prefix: queuePrefix(),
      concurrency: 1,
      lockDuration: timing.lockDurationMs ?? 30_000,
      stalledInterval: timing.stalledIntervalMs ?? 30_000,
      ...RETENTION,
    });
  }

  async submit(job: VerificationJob): Promise<void> {
    const jobId = `${job.verificationId}-${job.commit.slice(0, 12)}`;
    this.submitted.set(job.verificationId, jobId);
    this.owed.set(jobId, job);
    const data = distributedVerificationSchema.parse({ job, remote: this.where.remote, worldKey: this.where.worldKey, resultQueue: this.resultQueue });
    // A job that fails before the events are read would be heard of by no one (they are read from the newest on).
    await this.events.waitUntilReady();
    await this.jobs.add('verification', data, { jobId, attempts: 1, ...RETENTION });
  }

  nextResult(): Promise<VerificationResult> {
    const ready = this.delivered.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  async ensureSubmitted(): Promise<number> {
    let putBack = 0;
    for (const [jobId, job] of [...this.owed]) {
      const queued = await this.jobs.getJob(jobId);
      // A failure whose event went by unheard (a reconnect of the events' connection) still yields its result.
      if (queued && (await queued.isFailed()) && !(await this.results.getJob(jobId))) await this.reportLost(jobId, queued.failedReason);
      if (queued || (await this.results.getJob(jobId)) || !this.owed.has(jobId)) continue;
      await this.submit(job);
      putBack++;
    }
    return putBack;
  }

  /** Waiting jobs are removed; one a worker already runs finishes, and its result is ignored. */
  async cancel(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const jobId = this.submitted.get(id);
      if (jobId) this.owed.delete(jobId);
      const job = jobId ? await this.jobs.getJob(jobId) : undefined;
      if (job && (await job.isWaiting())) await job.remove().catch(() => undefined);
    }
  }

  async counts(): Promise<Record<string, number>> {
    return this.jobs.getJobCounts('waiting', 'active', 'completed', 'failed');
  }

  async close(): Promise<void> {
    // Bounded: while Redis restarts, BullMQ's close would wait for ever (see close-within.ts); then our connections are cut.
    await closeWithin(this.consumer.close(true).then(() => Promise.all([this.events.close(), this.jobs.close(), this.results.close()])));
    for (const c of this.connections) c.disconnect();
  }

  private take(job: Job): void {
    this.owed.delete(String(job.id));
    const parsed = verificationResultSchema.safeParse(job.data);
    if (!parsed.success) return; // malformed: not ours to trust, and the lander would refuse it anyway
    const taker = this.takers.shift();
    if (taker) taker(parsed.data);
    else this.delivered.push(parsed.data);
  }

  private async reportLost(jobId: string, failedReason: string): Promise<void> {
    const job = await this.jobs.getJob(jobId);
    const parsed = distributedVerificationSchema.safeParse(job?.data);
    if (!parsed.success || parsed.data.resultQueue !== this.resultQueue) return;
    const end = lostJobEnd(failedReason, `the verification of ${parsed.data.job.commit.slice(0, 12)}`);
    await this.results.add('result', failed(parsed.data.job, end.reason, end.message), { jobId, ...RETENTION });
  }
}
