import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import type { CalibrationGateJob } from '../../../src/operations/calibrate/calibration-gate.js';
import type { WorldManifest } from '../../../src/manifest/schema.js';
import { BullmqCalibrationGates } from '../../../src/queue/bullmq/calibration-queue.js';
import { CALIBRATION_QUEUE, queuePrefix } from '../../../src/queue/bullmq/distributed-job.js';
import { startEpisodeWorker, type EpisodeWorker, type WorkerEvent } from '../../../src/queue/bullmq/episode-worker.js';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { Queue } from 'bullmq';
import { testQueuePrefix, testRedis } from './redis-test-world.js';
import { runVerification } from '../../../src/integrate/verification/run-verification.js';

const it = itWith('redis');
const SHA = '0123456789abcdef0123456789abcdef01234567';
const GATE: CalibrationGateJob = { name: 'replay-0123456789ab-1', head: SHA, fromTree: SHA, candidateTree: SHA };
const unused = (): never => {
  throw new Error('not reached');
};

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close();
});

/** The gate of a calibration whose scratch world is at `path`, sent through Redis. */
async function gateAt(path: string, timing: { livenessMs?: number } = {}) {
  const sent = new BullmqCalibrationGates(await testRedis(), { worldKey: `test-${randomUUID()}` }, timing);
  closing.push(sent);
  return sent.gates({ scratch: LocalWorld.at(path), worldHead: SHA, manifest: {} as WorldManifest, sandbox: {} as Sandbox });
}

describe('calibration gates sent to the workers', () => {
  it('fail with a message that the world must be on shared storage when a worker cannot open the scratch world', async () => {
    testQueuePrefix();
    const redis = await testRedis();
    const events: WorkerEvent[] = [];
    const worker: EpisodeWorker = await startEpisodeWorker({
      redis,
      concurrency: 1,
      cacheDir: join(await tempDir(), 'cache'),
      createAgent: unused,
      createSandbox: unused,
      leases: (key) => new RedisPathLeases(redis, key),
      runVerification,
      onEvent: (e) => events.push(e),
    });
    closing.push({ close: () => worker.close(true) });
    const gate = await gateAt(join(await tempDir(), 'elsewhere', 'world.git'));
    const error = await gate(GATE).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'GenesisError', code: 'calibrate-gate-failed' });
    expect((error as Error).message).toContain(`the calibration gate ${GATE.name} did not finish on the workers`);
    expect((error as Error).message).toContain('calibration on workers needs the world on storage the workers share');
    expect(events).toEqual([]);
  });

  it('give up, without waiting for ever, when no worker is alive to take them, and take back the job that waits', async () => {
    testQueuePrefix();
    const redis = await testRedis();
    const gate = await gateAt(join(await tempDir(), 'world.git'), { livenessMs: 200 });
    const started = Date.now();
    await expect(gate(GATE)).rejects.toMatchObject({ name: 'GenesisError', code: 'calibrate-no-workers' });
    expect(Date.now() - started).toBeLessThan(5_000);
    await closing.pop()!.close();
    const jobs = new Queue(CALIBRATION_QUEUE, { connection: redis, prefix: queuePrefix() });
    expect(await jobs.getJobCounts('waiting')).toEqual({ waiting: 0 });
    await jobs.close();
  });
});
