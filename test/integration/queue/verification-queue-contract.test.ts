import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it as plainIt } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { BullmqVerificationQueue } from '../../../src/queue/bullmq/verification-queue.js';
import { consumeVerifications } from '../../../src/queue/bullmq/verification-consumer.js';
import { ResultQueues } from '../../../src/queue/bullmq/job-consumer.js';
import { MemoryVerificationQueue } from '../../../src/queue/memory/verification-queue.js';
import type { VerificationJob, VerificationResult } from '../../../src/queue/verification-job.js';
import type { VerificationHandler, VerificationQueue } from '../../../src/queue/verification-queue.js';
import { itWith } from '../../helpers/services.js';
import { testQueuePrefix, testRedis } from './redis-test-world.js';

/**
 * One contract, two queues: what the integration stage relies on from a VerificationQueue holds the
 * same in process (MemoryVerificationQueue and its slots) and over BullMQ (BullmqVerificationQueue
 * and the consumer every `genesis worker` runs), with the same handlers: each job runs once and
 * yields exactly one result, in completion order; a failing handler still yields a result, never a
 * pass; a job cancelled before it starts never runs; a malformed job is refused when submitted; a
 * job whose result came back is never put back.
 */
const TIMING = { lockDurationMs: 1000, stalledIntervalMs: 500 };
const COMMIT = 'fedcba9876543210fedcba9876543210fedcba98';
const ONTO = '0123456789abcdef0123456789abcdef01234567';

interface Harness {
  queue: VerificationQueue;
  close(): Promise<void>;
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

async function memory(handler: VerificationHandler, slots: number): Promise<Harness> {
  const queue = new MemoryVerificationQueue(handler, slots);
  return track({ queue, close: () => queue.close() });
}

async function bullmq(handler: VerificationHandler, slots: number): Promise<Harness> {
  testQueuePrefix();
  const redis = await testRedis();
  const queue = new BullmqVerificationQueue(redis, { remote: '/nowhere', worldKey: `test-${randomUUID()}` }, TIMING);
  const results = new ResultQueues(redis);
  const consumer = consumeVerifications({ redis, concurrency: slots, results, ...TIMING }, (data) => handler(data.job));
  return track({ queue, close: async () => Promise.all([consumer.close(true), queue.close()]).then(() => results.close()) });
}

function track(h: Harness): Harness {
  open.push(h);
  return h;
}

function job(task = 'add'): VerificationJob {
  const episodeId = newEpisodeId();
  return { verificationId: `${episodeId}-v1`, episodeId, generation: 1, world: 'calc', task, commit: COMMIT, onto: ONTO };
}

function passed(j: VerificationJob): VerificationResult {
  return {
    verificationId: j.verificationId,
    episodeId: j.episodeId,
    generation: j.generation,
    commit: j.commit,
    ok: true,
    reason: null,
    message: null,
    signature: null,
  };
}

function nextWithin(queue: VerificationQueue, ms: number): Promise<VerificationResult | 'nothing'> {
  return Promise.race([queue.nextResult(), sleep(ms, 'nothing' as const)]);
}

const adapters: Array<[string, typeof plainIt, (handler: VerificationHandler, slots: number) => Promise<Harness>]> = [
  ['the in-process verification queue', plainIt, memory],
  ['the BullMQ verification queue and its workers', itWith('redis'), bullmq],
];

for (const [name, it, make] of adapters) {
  describe(name, () => {
    it('hands back the result of the job it ran', async () => {
      const { queue } = await make(async (j) => passed(j), 1);
      const j = job();
      await queue.submit(j);
      expect(await queue.nextResult()).toEqual(passed(j));
    });

    it('runs a job submitted twice only once, with one result', async () => {
      let calls = 0;
      const { queue } = await make(async (j) => {
        calls++;
        return passed(j);
      }, 2);
      const j = job();
      await queue.submit(j);
      await queue.submit(j);
      expect((await queue.nextResult()).verificationId).toBe(j.verificationId);
      expect(await nextWithin(queue, 1000)).toBe('nothing');
      expect(calls).toBe(1);
    });

    it('delivers results in the order the jobs finish, not the order they came', async () => {
      const { queue } = await make(async (j) => {
        await sleep(j.task === 'slow' ? 1500 : 10);
        return passed(j);
      }, 2);
      const [slow, fast] = [job('slow'), job('fast')];
      await queue.submit(slow);
      await queue.submit(fast);
      const first = await queue.nextResult();
      const second = await queue.nextResult();
      expect([first.verificationId, second.verificationId]).toEqual([fast.verificationId, slow.verificationId]);
    });

    it("turns a failing handler into a rejection of that job that carries the worker's message, never a pass", async () => {
      const { queue } = await make(async () => {
        throw new Error('boom');
      }, 1);
      const j = job();
      await queue.submit(j);
      const result = await nextWithin(queue, 15_000);
      expect(result).toMatchObject({ verificationId: j.verificationId, episodeId: j.episodeId, commit: j.commit, ok: false });
      expect(result === 'nothing' ? '' : result.message).toContain('boom');
    });

    it('never starts a job cancelled while it waits; the running one finishes with its result', async () => {
      const started: string[] = [];
      const released: Array<() => void> = [];
      const gate = new Promise<void>((resolve) => released.push(resolve));
      const { queue } = await make(async (j) => {
        started.push(j.task);
        if (j.task === 'first') await gate;
        return passed(j);
      }, 1);
      const [first, waiting] = [job('first'), job('waiting')];
      await queue.submit(first);
      await expect.poll(() => started, { timeout: 10_000 }).toEqual(['first']);
      await queue.submit(waiting);
      await queue.cancel([waiting.verificationId]);
      for (const release of released) release();
      expect((await queue.nextResult()).verificationId).toBe(first.verificationId);
      expect(await nextWithin(queue, 1500)).toBe('nothing');
      expect(started).toEqual(['first']);
    });

    it('refuses a malformed job when it is submitted', async () => {
      const { queue } = await make(async (j) => passed(j), 1);
      await expect(queue.submit({ ...job(), commit: 'not a commit' })).rejects.toThrow(/a full commit id/);
    });

    it('puts back no job whose result came back', async () => {
      const { queue } = await make(async (j) => passed(j), 1);
      await queue.submit(job());
      await queue.nextResult();
      expect(await queue.ensureSubmitted()).toBe(0);
    });
  });
}
