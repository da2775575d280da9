import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { z } from 'zod';
import type { VerificationResult } from '../verification-job.js';
import { distributedVerificationSchema, VERIFICATION_QUEUE } from './distributed-job.js';
import { type ConsumerSettings, type ResultQueues, workerSettings } from './job-consumer.js';

/** A verification job as it travels through Redis: the job, the world's location and key, and where its result goes. */
export type DistributedVerification = z.output<typeof distributedVerificationSchema>;

/**
 * The BullMQ half of a worker's verification loop, with what a job runs left to `handler`: each job
 * it takes is validated (a malformed one is given up at once) and the handler's result is sent to
 * the world's results queue. A handler that throws fails the job, and the scheduler's queue answers
 * it `worker-lost` (see BullmqVerificationQueue). It holds the contract of the in-process pool
 * (test/integration/queue/verification-queue-contract).
 */
export function consumeVerifications(
  settings: ConsumerSettings & { results: ResultQueues; onEnd?: (data: DistributedVerification, result: VerificationResult) => void },
  handler: (data: DistributedVerification) => Promise<VerificationResult>,
): { close(force?: boolean): Promise<void> } {
  // Blocks on a connection of its own, as each BullMQ worker must.
  const blocking = settings.redis.duplicate();
  const take = async (job: Job): Promise<void> => {
    const parsed = distributedVerificationSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`malformed verification job ${job.id}: ${parsed.error.issues[0]?.message ?? ''}`);
    const result = await handler(parsed.data);
    await settings.results.send(parsed.data.resultQueue, String(job.id), result);
    settings.onEnd?.(parsed.data, result);
  };
  const worker = new Worker(VERIFICATION_QUEUE, take, workerSettings(blocking, settings));
  worker.on('error', () => undefined);
  return {
    async close(force = false) {
      await worker.close(force);
      // BullMQ leaves a connection it was given open; this one is ours to close.
      blocking.disconnect();
    },
  };
}
