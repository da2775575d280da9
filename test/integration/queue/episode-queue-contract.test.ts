import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it as plainIt } from 'vitest';
import type { EpisodeResult } from '../../../src/episode/episode-job.js';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { consumeEpisodes, ResultQueues, type EpisodeConsumer } from '../../../src/queue/bullmq/job-consumer.js';
import { BullmqEpisodeQueue } from '../../../src/queue/bullmq/episode-queue.js';
import { EPISODE_QUEUE, queuePrefix } from '../../../src/queue/bullmq/distributed-job.js';
import type { EpisodeHandler, EpisodeQueue } from '../../../src/queue/episode-queue.js';
import { MemoryEpisodeQueue } from '../../../src/queue/memory/memory-queue.js';
import { itWith } from '../../helpers/services.js';
import { job, nextWithin, passed } from '../../helpers/episode-jobs.js';
import { REDIS_URL, testQueuePrefix, testRedis } from './redis-test-world.js';

/**
 * One contract, two queues: what the run loop relies on from an EpisodeQueue holds the same in
 * process (MemoryEpisodeQueue and its pool) and over BullMQ (BullmqEpisodeQueue and the consumer
 * every `genesis worker` runs), with the same handlers: each job runs once and yields exactly one
 * result, in completion order (each acknowledged before the next is counted on); a failure is a
 * result whose verdict says whether it is charged to the task and whether it stops the run; a malformed
 * result is the worker's error; a job the queue still holds is never submitted twice.
 */
/** Fast stall detection: a killed consumer's job is taken again after about 1.5 s. */
const TIMING = { lockDurationMs: 1000, stalledIntervalMs: 500 };

interface Harness {
  queue: EpisodeQueue;
  close(): Promise<void>;
}

const open: Harness[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const h of open.splice(0)) await h.close();
});

async function memory(handler: EpisodeHandler, concurrency: number): Promise<Harness> {
  const queue = new MemoryEpisodeQueue(handler, concurrency);
  return track({ queue, close: () => queue.close() });
}

async function bullmq(handler: EpisodeHandler, concurrency: number): Promise<Harness> {
  testQueuePrefix();
  const redis = await testRedis();
  const queue = new BullmqEpisodeQueue(redis, { remote: '/nowhere', worldKey: `test-${randomUUID()}` }, TIMING);
  const consumer = await consume(handler, concurrency);
  return track({ queue, close: async () => Promise.all([consumer.close(true), queue.close()]).then(() => undefined) });
}

/** A worker's consumer in this process, running `handler` on each job's episode. */
async function consume(handler: EpisodeHandler, concurrency: number): Promise<EpisodeConsumer> {
  const redis = await testRedis();
  const results = new ResultQueues(redis);
  const consumer = consumeEpisodes({ redis, concurrency, results, ...TIMING }, (data, signal) => handler(data.job, signal));
  return { running: () => consumer.running(), close: async (force) => Promise.all([consumer.close(force), results.close()]).then(() => undefined) };
}

function track(h: Harness): Harness {
  open.push(h);
  return h;
}

const adapters: Array<[string, typeof plainIt, (handler: EpisodeHandler, concurrency: number) => Promise<Harness>]> = [
  ['the in-process queue', plainIt, memory],
  ['the BullMQ queue and its workers', itWith('redis'), bullmq],
];

for (const [name, it, make] of adapters) {
  describe(name, () => {
    it('hands back the result of the job it ran', async () => {
      const { queue } = await make(async (j) => passed(j), 1);
      const j = job();
      await queue.submit(j);
      expect(await queue.nextResult()).toEqual(passed(j));
      await queue.acknowledge(j.episodeId);
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
      expect((await queue.nextResult()).episodeId).toBe(j.episodeId);
      await queue.acknowledge(j.episodeId);
      expect(await nextWithin(queue, 1000)).toBe('nothing');
      expect(calls).toBe(1);
    });

    it('delivers results in the order the jobs finish, not the order they came', async () => {
      const { queue } = await make(async (j) => {
        await sleep(j.task === 'slow' ? 1500 : 10);
        return passed(j);
      }, 2);
      await queue.submit(job('slow'));
      await queue.submit(job('fast'));
      const first = await queue.nextResult();
      await queue.acknowledge(first.episodeId);
      const second = await queue.nextResult();
      await queue.acknowledge(second.episodeId);
      expect([first.task, second.task]).toEqual(['fast', 'slow']);
    });

    it('turns a failing handler into a result: an outage or a fatal configuration error is given back uncharged (the fatal one says so, to stop the run), anything else fails the episode', async () => {
      const throws: Record<string, () => Error> = {
        outage: () => new GenesisError('docker-unavailable', 'the Docker daemon does not answer'),
        broken: () => new GenesisError('agent-not-found', 'claude: command not found', { hint: 'install the agent' }),
        bug: () => new Error('boom'),
      };
      const { queue } = await make(async (j) => {
        throw throws[j.task]!();
      }, 3);
      const jobs = Object.keys(throws).map((t) => job(t));
      for (const j of jobs) await queue.submit(j);
      const got = new Map<string, EpisodeResult>();
      for (const _ of jobs) {
        const r = await queue.nextResult();
        got.set(r.task, r);
        await queue.acknowledge(r.episodeId);
      }
      expect(got.get('outage')).toMatchObject({ verdict: 'abandoned', reason: 'docker-unavailable', fatal: false, candidate: null });
      expect(got.get('broken')).toMatchObject({
        verdict: 'abandoned',
        reason: 'agent-not-found',
        fatal: true,
        message: 'claude: command not found (install the agent)',
      });
      expect(got.get('bug')).toMatchObject({
        verdict: 'failed',
        reason: 'worker-error',
        fatal: false,
        message: 'boom',
        signature: 'worker-error:worker-error',
      });
    });

    it("turns a malformed result into the worker's error, still exactly one result", async () => {
      const { queue } = await make(async () => ({ verdict: 'passed', candidate: 'not a commit' }) as unknown as EpisodeResult, 1);
      const j = job();
      await queue.submit(j);
      const result = await queue.nextResult();
      expect(result).toMatchObject({ episodeId: j.episodeId, task: j.task, verdict: 'failed', reason: 'worker-error', candidate: null });
      expect(result.message).toMatch(/malformed result/);
      await queue.acknowledge(j.episodeId);
      expect(await nextWithin(queue, 1000)).toBe('nothing');
    });

    it('stops one job when asked (a racer outrun): a running one is aborted, a waiting one never starts, each still yields its result', async () => {
      const started: string[] = [];
      const { queue } = await make(async (j, signal) => {
        started.push(j.task);
        return sleep(j.task === 'slow' ? 60_000 : 20, undefined, { signal }).then(
          () => passed(j),
          () => ({ ...passed(j), verdict: 'abandoned' as const, candidate: null, reason: 'aborted' as const }),
        );
      }, 1);
      const [slow, waiting, other] = [job('slow'), job('waiting'), job('other')];
      for (const j of [slow, waiting, other]) await queue.submit(j);
      while (started.length === 0) await sleep(20);
      await queue.cancel(waiting.episodeId);
      await queue.cancel(slow.episodeId);
      const got: EpisodeResult[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await nextWithin(queue, 10_000);
        if (r === 'nothing') break;
        got.push(r);
        await queue.acknowledge(r.episodeId);
      }
      expect(Object.fromEntries(got.map((r) => [r.task, r.verdict]))).toEqual({ slow: 'abandoned', waiting: 'abandoned', other: 'passed' });
      expect(started).toEqual(['slow', 'other']);
    });

    it('closes by aborting a running episode and returns only once it has ended (nothing of it writes afterwards)', async () => {
      let started = false;
      let ended = false;
      const harness = await make(async (j, signal) => {
        started = true;
        await sleep(60_000, undefined, { signal }).catch(() => undefined);
        // An aborted episode still stops its agent and removes its workspace; close must wait for that.
        await sleep(300);
        ended = true;
        return { ...passed(j), verdict: 'abandoned' as const, candidate: null, reason: 'aborted' as const };
      }, 1);
      const j = job();
      await harness.queue.submit(j);
      await expect.poll(() => started, { timeout: 10_000 }).toBe(true);
      open.splice(open.indexOf(harness), 1);
      await harness.close();
      expect(ended).toBe(true);
    });

    it('leaves alone a job it holds, running or with its result still owed', async () => {
      let calls = 0;
      let finish: () => void = () => undefined;
      const { queue } = await make(async (j) => {
        calls++;
        await new Promise<void>((resolve) => (finish = resolve));
        return passed(j);
      }, 1);
      const j = job();
      await queue.submit(j);
      while (calls === 0) await sleep(20);
      expect(await queue.ensureSubmitted(j)).toBe(false);
      finish();
      expect((await queue.nextResult()).episodeId).toBe(j.episodeId);
      expect(await queue.ensureSubmitted(j)).toBe(false);
      await queue.acknowledge(j.episodeId);
      expect(await nextWithin(queue, 1000)).toBe('nothing');
      expect(calls).toBe(1);
    });
  });
}

/**
 * Where the two differ by design: in process the worker is the scheduler, so a killed worker is a
 * killed run, and the next run recovers its episodes from the ledger (run-recovery). Over BullMQ
 * a worker dies alone, and the queue itself must see its job through.
 */
describe('the BullMQ queue when a worker dies', () => {
  const it = itWith('redis');

  it('runs the job of a killed worker again on another worker, and yields one result', async () => {
    const prefix = testQueuePrefix();
    const redis = await testRedis();
    const queue = track(new BullmqEpisodeQueueHarness(redis)).queue;
    const victim = spawnConsumer(prefix);
    expect(await victim.next()).toEqual({ event: 'ready' });
    const j = job();
    await queue.submit(j);
    expect(await victim.next()).toEqual({ event: 'started', episodeId: j.episodeId });
    victim.child.kill('SIGKILL');
    let ranAgain = 0;
    const survivor = await consume(async (k) => {
      ranAgain++;
      return passed(k);
    }, 1);
    try {
      expect(await nextWithin(queue, 20_000)).toEqual(passed(j));
      await queue.acknowledge(j.episodeId);
      expect(await nextWithin(queue, 2000)).toBe('nothing');
      expect(ranAgain).toBe(1);
    } finally {
      await survivor.close(true);
    }
  });

  it('closes a job that froze two workers poison-pill, and runs it on no third', async () => {
    const prefix = testQueuePrefix();
    const redis = await testRedis();
    const queue = track(new BullmqEpisodeQueueHarness(redis)).queue;
    // Two workers whose handler holds the event loop for good: the first stall hands the job to the second.
    const frozen = [spawnConsumer(prefix, 'freeze'), spawnConsumer(prefix, 'freeze')];
    for (const worker of frozen) expect(await worker.next()).toEqual({ event: 'ready' });
    const j = job();
    await queue.submit(j);
    const started = { event: 'started', episodeId: j.episodeId };
    expect(await Promise.all(frozen.map((w) => w.next()))).toEqual([started, started]);
    // A third, awake, finds the second stall and takes the job only to close it.
    let ranAgain = 0;
    const third = await consume(async (k) => {
      ranAgain++;
      return passed(k);
    }, 1);
    try {
      expect(await nextWithin(queue, 20_000)).toMatchObject({ episodeId: j.episodeId, verdict: 'failed', reason: 'poison-pill', signature: 'poison-pill' });
      expect(ranAgain).toBe(0);
      const episodes = new Queue(EPISODE_QUEUE, { connection: redis, prefix: queuePrefix() });
      expect(await episodes.getJobState(j.episodeId)).toBe('failed');
      await episodes.close();
      await queue.acknowledge(j.episodeId);
    } finally {
      await third.close(true);
    }
  });

  it('puts back a job Redis lost (a restart without persistence), and runs it once', async () => {
    testQueuePrefix();
    const redis = await testRedis();
    const queue = track(new BullmqEpisodeQueueHarness(redis)).queue;
    const j = job();
    await queue.submit(j);
    const episodes = new Queue(EPISODE_QUEUE, { connection: redis, prefix: queuePrefix() });
    await (await episodes.getJob(j.episodeId))!.remove();
    await episodes.close();
    expect(await queue.ensureSubmitted(j)).toBe(true);
    expect(await queue.ensureSubmitted(j)).toBe(false);
    let calls = 0;
    const worker = await consume(async (k) => {
      calls++;
      return passed(k);
    }, 1);
    try {
      expect(await nextWithin(queue, 20_000)).toEqual(passed(j));
      expect(calls).toBe(1);
    } finally {
      await worker.close(true);
    }
  });
});

/** The scheduler's side alone, no consumer: the test starts its workers itself. */
class BullmqEpisodeQueueHarness implements Harness {
  readonly queue: BullmqEpisodeQueue;

  constructor(redis: Awaited<ReturnType<typeof testRedis>>) {
    this.queue = new BullmqEpisodeQueue(redis, { remote: '/nowhere', worldKey: `test-${randomUUID()}` }, TIMING);
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

const CHILD = fileURLToPath(new URL('./episode-consumer-child.ts', import.meta.url));

/** A worker's consumer in a process of its own whose jobs never finish (`freeze`: nor does its event loop); `next` is its next printed event. */
function spawnConsumer(prefix: string, mode = ''): { child: ChildProcess; next: () => Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, REDIS_URL, String(TIMING.lockDurationMs), String(TIMING.stalledIntervalMs), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GENESIS_QUEUE_PREFIX: prefix },
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error('the consumer process exited');
      return JSON.parse(line.value) as unknown;
    },
  };
}
