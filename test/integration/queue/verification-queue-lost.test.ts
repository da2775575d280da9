import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { describe, expect } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import type { VerificationJob } from '../../../src/queue/verification-job.js';
import { BullmqVerificationQueue } from '../../../src/queue/bullmq/verification-queue.js';
import { queuePrefix, RETENTION, VERIFICATION_QUEUE, verificationResultQueueOf } from '../../../src/queue/bullmq/distributed-job.js';
import { itWith } from '../../helpers/services.js';
import { testQueuePrefix, testRedis } from './redis-test-world.js';

const it = itWith('redis');
const COMMIT = 'fedcba9876543210fedcba9876543210fedcba98';
const ONTO = '0123456789abcdef0123456789abcdef01234567';

function job(): VerificationJob {
  const episodeId = newEpisodeId();
  return { verificationId: `${episodeId}-v1`, episodeId, generation: 1, world: 'calc', task: 'add', commit: COMMIT, onto: ONTO };
}

describe('the BullMQ verification queue when Redis loses a job', () => {
  it('puts back a job whose result is still owed, once, and leaves alone one whose result came back', async () => {
    testQueuePrefix();
    const redis = await testRedis();
    const worldKey = `test-${randomUUID()}`;
    const queue = new BullmqVerificationQueue(redis, { remote: '/nowhere', worldKey }, { lockDurationMs: 1000, stalledIntervalMs: 500 });
    const jobs = new Queue(VERIFICATION_QUEUE, { connection: redis, prefix: queuePrefix() });
    const results = new Queue(verificationResultQueueOf(worldKey), { connection: redis, prefix: queuePrefix() });
    try {
      const owed = job();
      const answered = job();
      await queue.submit(owed);
      await queue.submit(answered);
      const ids = (await jobs.getJobs(['waiting'])).map((j) => String(j.id));
      expect(ids).toHaveLength(2);
      // A worker answers one of them.
      const answeredId = ids.find((id) => id.startsWith(answered.verificationId))!;
      await results.add(
        'result',
        {
          verificationId: answered.verificationId,
          episodeId: answered.episodeId,
          generation: 1,
          commit: COMMIT,
          ok: true,
          reason: null,
          message: null,
          signature: null,
        },
        { jobId: answeredId, ...RETENTION },
      );
      expect(await queue.nextResult()).toMatchObject({ verificationId: answered.verificationId, ok: true });
      // Redis restarts and its last second of writes is gone: both jobs.
      for (const id of ids) await (await jobs.getJob(id))?.remove();
      expect(await queue.ensureSubmitted()).toBe(1);
      expect((await jobs.getJobs(['waiting'])).map((j) => (j.data as { job: VerificationJob }).job.verificationId)).toEqual([owed.verificationId]);
      expect(await queue.ensureSubmitted()).toBe(0);
    } finally {
      await Promise.all([jobs.close(), results.close()]);
      await queue.close();
    }
  });
});
