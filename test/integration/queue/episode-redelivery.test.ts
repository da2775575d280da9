import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect } from 'vitest';
import { createAgent } from '../../../src/agents/create-agent.js';
import { newEpisodeId, type EpisodeJob } from '../../../src/episode/episode-job.js';
import { readClusterStatus } from '../../../src/queue/bullmq/cluster-status.js';
import { BullmqEpisodeQueue } from '../../../src/queue/bullmq/episode-queue.js';
import { startEpisodeWorker, type EpisodeWorker } from '../../../src/queue/bullmq/episode-worker.js';
import { EPISODE_QUEUE, queuePrefix, resultQueueOf } from '../../../src/queue/bullmq/distributed-job.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { openRecord } from '../../helpers/open-record.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { GOOD_A, makeWorld } from '../../helpers/world-fixture.js';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import { testQueuePrefix, testRedis } from './redis-test-world.js';
import { runVerification } from '../../../src/integrate/verification/run-verification.js';

const it = itWith('redis');
const workers: EpisodeWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close(true);
});

describe('an episode job delivered again after its episode ran and passed', () => {
  it('is answered from the record, without running the agent again or touching the record', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: { a: [{ write: { 'src/a.js': GOOD_A } }] } });
    testQueuePrefix();
    const redis = await testRedis();
    const where = { remote: f.world.path, worldKey: `test-${randomUUID()}` };
    const queue = new BullmqEpisodeQueue(redis, where, { lockDurationMs: 2000, stalledIntervalMs: 1000 });
    workers.push(
      await startEpisodeWorker({
        redis: await testRedis(),
        concurrency: 1,
        cacheDir: join(await tempDir(), 'cache'),
        createAgent,
        createSandbox: async () => f.sandbox,
        leases: (key) => new RedisPathLeases(redis, key),
        runVerification,
      }),
    );
    const ledger = new GitLedger(f.world.path);
    const job: EpisodeJob = { episodeId: newEpisodeId(), world: 'fixture', task: 'a', attempt: 1, base: f.commit };
    await ledger.write(openRecord(job));
    try {
      await queue.submit(job);
      const first = await queue.nextResult();
      expect(first).toMatchObject({ episodeId: job.episodeId, verdict: 'passed' });
      await queue.acknowledge(job.episodeId);
      const recorded = await f.world.resolveRef(`refs/genesis/episodes/${job.episodeId}`);

      // Redis lost the job and its result (a restart without persistence); the scheduler puts the job back.
      for (const name of [EPISODE_QUEUE, resultQueueOf(where.worldKey)]) {
        const q = new Queue(name, { connection: redis, prefix: queuePrefix() });
        await (await q.getJob(job.episodeId))?.remove();
        await q.close();
      }
      expect(await queue.ensureSubmitted(job)).toBe(true);
      const again = await queue.nextResult();
      await queue.acknowledge(job.episodeId);

      // The same change, as recorded: a second run would have made another candidate and rewritten the record.
      expect(again).toEqual(first);
      expect(await f.world.resolveRef(`refs/genesis/episodes/${job.episodeId}`)).toBe(recorded);
      expect((await ledger.read(job.episodeId))?.candidate).toBe(first.candidate);
    } finally {
      await queue.close();
    }
  }, 120_000);
});

describe('a taken episode job whose worker is lost', () => {
  it('is held by its worker while that worker beats, and by nobody once its heartbeat is gone', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 20_000 }] } });
    testQueuePrefix();
    const redis = await testRedis();
    const queue = new BullmqEpisodeQueue(redis, { remote: f.world.path, worldKey: `test-${randomUUID()}` });
    const worker = await startEpisodeWorker({
      redis: await testRedis(),
      concurrency: 1,
      cacheDir: join(await tempDir(), 'cache'),
      createAgent,
      createSandbox: async () => f.sandbox,
      leases: (key) => new RedisPathLeases(redis, key),
      runVerification,
    });
    workers.push(worker);
    const job: EpisodeJob = { episodeId: newEpisodeId(), world: 'fixture', task: 'a', attempt: 1, base: f.commit };
    await new GitLedger(f.world.path).write(openRecord(job));
    try {
      await queue.submit(job);
      await expect.poll(async () => (await queue.holders([job.episodeId])).get(job.episodeId), { timeout: 15_000 }).toBe(worker.id);
      expect((await readClusterStatus(redis)).running).toMatchObject([{ episodeId: job.episodeId, worker: worker.id, lost: false }]);
      // Its heartbeat expired, as a killed worker's does: the job is still active, its holder gone.
      await redis.del(`genesis:workers:${worker.id}`);
      expect(await queue.holders([job.episodeId])).toEqual(new Map([[job.episodeId, null]]));
      // genesis status --redis says so too, instead of showing it running on a worker that is not there.
      expect((await readClusterStatus(redis)).running).toMatchObject([{ episodeId: job.episodeId, worker: worker.id, lost: true }]);
    } finally {
      // Stopped before the world's folder goes: its episode writes into it.
      await worker.close(true);
      workers.splice(workers.indexOf(worker), 1);
      await queue.close();
    }
  }, 60_000);
});
