import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { createAgent } from '../../../src/agents/create-agent.js';
import { composeClusterRun } from '../../../src/compose/cluster-run.js';
import { BullmqEpisodeQueue } from '../../../src/queue/bullmq/episode-queue.js';
import { startEpisodeWorker, type EpisodeWorker } from '../../../src/queue/bullmq/episode-worker.js';
import { BullmqVerificationQueue } from '../../../src/queue/bullmq/verification-queue.js';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import type { RunOptions } from '../../../src/schedule/run/run-world.js';
import { tempDir } from '../../helpers/temp-dir.js';
import type { FixtureWorld } from '../../helpers/world-fixture.js';
import { testQueuePrefix, testRedis, testWorld } from './redis-test-world.js';
import { runVerification } from '../../../src/integrate/verification/run-verification.js';

const workers: EpisodeWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close(true);
});

export interface ClusterTestRun {
  redis: Redis;
  worldKey: string;
  leases: RedisPathLeases;
  options: Pick<RunOptions, 'ports' | 'distributed'>;
}

/**
 * A run of `f` over BullMQ as `genesis run --redis` makes one, against the real Redis: a private
 * queue prefix and world key (deleted when the test ends), one episode worker in this process
 * (closed when the test ends) with fast stall detection, and the run's options for runWorld.
 */
export async function clusterTestRun(f: FixtureWorld, opts: { concurrency: number; reconcileMs: number }): Promise<ClusterTestRun> {
  testQueuePrefix();
  const redis = await testRedis();
  const where = { remote: f.world.path, worldKey: testWorld() };
  const leases = new RedisPathLeases(redis, where.worldKey);
  // Loads its script, so asking later is one command in the connection's order.
  await leases.holders();
  const timing = { lockDurationMs: 2000, stalledIntervalMs: 1000 };
  workers.push(
    await startEpisodeWorker({
      redis: await testRedis(),
      concurrency: opts.concurrency,
      cacheDir: join(await tempDir(), 'cache'),
      ...timing,
      createAgent,
      createSandbox: async () => f.sandbox,
      leases: (key) => new RedisPathLeases(redis, key),
      runVerification,
    }),
  );
  const distributed = {
    queue: new BullmqEpisodeQueue(redis, where, timing),
    leases,
    verifications: new BullmqVerificationQueue(redis, where, timing),
    reconcileMs: opts.reconcileMs,
  };
  return { redis, worldKey: where.worldKey, leases, options: await composeClusterRun(f.world, distributed, f.sandbox) };
}
