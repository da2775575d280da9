import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import type { VerificationJob } from '../../../src/queue/verification-job.js';
import type { WorldManifest } from '../../../src/manifest/schema.js';
import type { CalibrationGateJob } from '../../../src/operations/calibrate/calibration-gate.js';
import { BullmqCalibrationGates } from '../../../src/queue/bullmq/calibration-queue.js';
import { CALIBRATION_QUEUE, queuePrefix, VERIFICATION_QUEUE } from '../../../src/queue/bullmq/distributed-job.js';
import { workerSettings } from '../../../src/queue/bullmq/job-consumer.js';
import { BullmqVerificationQueue } from '../../../src/queue/bullmq/verification-queue.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { itWith } from '../../helpers/services.js';
import { REDIS_URL, testQueuePrefix, testRedis } from './redis-test-world.js';

/**
 * A job that froze two workers is offered to no third, whatever its kind: the rule the episode
 * queue's contract shows for episodes ('closes a job that froze two workers poison-pill') holds
 * for verifications of speculative commits and for calibration gates, which every worker takes too.
 */
const it = itWith('redis');
const TIMING = { lockDurationMs: 1000, stalledIntervalMs: 500 };
const CHILD = fileURLToPath(new URL('./frozen-worker-child.ts', import.meta.url));
const SHA = '0123456789abcdef0123456789abcdef01234567';

const cleanups: Array<() => Promise<unknown> | undefined> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function spawnFrozen(prefix: string, queue: string): { next: () => Promise<unknown> } {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, REDIS_URL, String(TIMING.lockDurationMs), String(TIMING.stalledIntervalMs), queue],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, GENESIS_QUEUE_PREFIX: prefix },
    },
  );
  cleanups.push(() => void child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error('the worker process exited');
      return JSON.parse(line.value) as unknown;
    },
  };
}

/**
 * Two frozen workers of `queue` take the job one after the other; then a third, awake, with the
 * settings every worker has, finds the second stall. Resolves with how often the third ran a job.
 */
async function freezeTwoWorkers(prefix: string, queue: string, submit: () => Promise<void>): Promise<() => number> {
  const frozen = [spawnFrozen(prefix, queue), spawnFrozen(prefix, queue)];
  for (const worker of frozen) expect(await worker.next()).toEqual({ event: 'ready' });
  await submit();
  const started = await Promise.all(frozen.map((w) => w.next()));
  expect(started.map((s) => (s as { event: string }).event)).toEqual(['started', 'started']);
  let ran = 0;
  const redis = await testRedis();
  const blocking = redis.duplicate();
  const third = new Worker(
    queue,
    async () => {
      ran++;
    },
    workerSettings(blocking, { redis, concurrency: 1, ...TIMING }),
  );
  cleanups.push(async () => {
    await third.close(true);
    blocking.disconnect();
  });
  return () => ran;
}

describe('a job that froze two workers', () => {
  it('is closed poison-pill when it is a verification, and its result says so', async () => {
    const prefix = testQueuePrefix();
    const redis = await testRedis();
    const queue = new BullmqVerificationQueue(redis, { remote: '/nowhere', worldKey: `test-${randomUUID()}` }, TIMING);
    cleanups.push(() => queue.close());
    const episodeId = newEpisodeId();
    const job: VerificationJob = { verificationId: `${episodeId}-v1`, episodeId, generation: 1, world: 'calc', task: 'add', commit: SHA, onto: SHA };
    const thirdRan = await freezeTwoWorkers(prefix, VERIFICATION_QUEUE, () => queue.submit(job));
    const result = await Promise.race([queue.nextResult(), new Promise((resolve) => setTimeout(() => resolve('nothing'), 20_000))]);
    expect(result).toMatchObject({ verificationId: job.verificationId, ok: false, reason: 'poison-pill', signature: 'verification-poison-pill' });
    expect((result as { message: string }).message).toContain('stalled two workers in a row');
    expect(thirdRan()).toBe(0);
    const jobs = new Queue(VERIFICATION_QUEUE, { connection: redis, prefix: queuePrefix() });
    cleanups.push(() => jobs.close());
    expect(await jobs.getJobState(`${job.verificationId}-${SHA.slice(0, 12)}`)).toBe('failed');
  });

  it('ends a calibration gate with calibrate-poison-pill, not retried and run on no third worker', async () => {
    const prefix = testQueuePrefix();
    const redis = await testRedis();
    // The frozen workers keep no heartbeat; the liveness look must not give up before the stall limit is met.
    const gates = new BullmqCalibrationGates(redis, { worldKey: `test-${randomUUID()}` }, { livenessMs: 60_000 });
    cleanups.push(() => gates.close());
    const gate: CalibrationGateJob = { name: 'replay-0123456789ab-1', head: SHA, fromTree: SHA, candidateTree: SHA };
    const run = gates.gates({ scratch: LocalWorld.at('/nowhere/world.git'), worldHead: SHA, manifest: {} as WorldManifest, sandbox: {} as Sandbox });
    let verdict: Promise<unknown> = Promise.resolve();
    const thirdRan = await freezeTwoWorkers(prefix, CALIBRATION_QUEUE, async () => {
      verdict = run(gate).catch((error: unknown) => error);
    });
    const error = await Promise.race([verdict, new Promise((resolve) => setTimeout(() => resolve('nothing'), 20_000))]);
    expect(error).toMatchObject({ name: 'GenesisError', code: 'calibrate-poison-pill' });
    expect((error as Error).message).toContain(`the calibration gate ${gate.name} stalled two workers in a row`);
    expect(thirdRan()).toBe(0);
  });
});
