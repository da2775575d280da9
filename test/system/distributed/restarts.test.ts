import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { worldKeyOf } from '../../../src/queue/bullmq/distributed-job.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import { startCli } from '../../helpers/cli-process.js';
import { checkWorldInvariants, fastClusterEnv, makeTaskWorld } from '../../helpers/distributed-world.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const REDIS = 'redis://127.0.0.1:6379';
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('a distributed run survives restarts', () => {
  // Its own waits add up to more than vitest's default minute: the scheduler's start, then its run to the end.
  itWith('redis')(
    'resumes from the world and the queue when the scheduler is killed and started again',
    async () => {
      const { f, tasks } = await makeTaskWorld(5, 1500);
      const env = fastClusterEnv();
      const workers = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '2'], env));
      await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
      const first = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      await first.waitFor(/"type":"episode-start"/);
      first.child.kill('SIGKILL');
      await first.exited;
      // Its integrator lock expires (3 s here); until then a second scheduler is refused, clearly.
      let second = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      // Either it starts (its first event) or it is refused (exit 1) and is tried again a second later.
      for (let i = 0; i < 15 && (await Promise.race([second.exited, second.waitFor(/"type":"start"/, 60_000).then(() => 'started')])) === 1; i++) {
        expect(second.stderr()).toMatch(/integrator-running/);
        await new Promise((r) => setTimeout(r, 1000));
        second = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      }
      expect(await within(second.exited, 120_000)).toBe(0);
      expect(await checkWorldInvariants(f, tasks)).toEqual([]);
      for (const w of workers) w.child.kill('SIGTERM');
    },
    200_000,
  );

  itWith('redis')(
    'refuses a second scheduler on the same world while the first one runs',
    async () => {
      const { f } = await makeTaskWorld(2, 3000);
      const env = fastClusterEnv();
      const first = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      await first.waitFor(/"type":"episode-start"/);
      const second = startCli(['run', '--world', f.world.path, '--redis', REDIS], env);
      expect(await within(second.exited, 20_000)).toBe(1);
      expect(second.stderr()).toMatch(/integrator-running/);
      first.child.kill('SIGINT');
      // Until it has stopped it still writes in the world, whose directory the test's clean-up removes.
      expect(await within(first.exited, 60_000)).not.toBe('timeout');
    },
    120_000,
  );

  itWith('redis')('lets a worker finish its episode on SIGTERM before it exits', async () => {
    const { f, tasks } = await makeTaskWorld(1, 2000);
    const env = fastClusterEnv();
    const worker = startCli(['worker', '--redis', REDIS, '--json'], env);
    await worker.waitFor(/"type":"ready"/);
    const run = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
    await worker.waitFor(/"type":"start"/);
    worker.child.kill('SIGTERM');
    expect(await within(worker.exited, 30_000)).toBe(0);
    expect(worker.lines.some((l) => l.includes('"type":"end"') && l.includes('"verdict":"passed"'))).toBe(true);
    expect(await within(run.exited, 30_000)).toBe(0);
    expect(await checkWorldInvariants(f, tasks)).toEqual([]);
  });

  itWith('redis')(
    'carries on when Redis restarts in the middle of a run',
    async () => {
      const dir = await tempDir('genesis-redis-');
      const port = String(16000 + Math.floor(Math.random() * 2000));
      const url = `redis://127.0.0.1:${port}`;
      const startRedis = () =>
        spawn('redis-server', ['--port', port, '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], { stdio: 'ignore' });
      let redis = startRedis();
      await new Promise((r) => setTimeout(r, 300));
      try {
        const { f, tasks } = await makeTaskWorld(4, 1500, 2);
        // The integrator lock must outlive Redis's downtime and its reload; three seconds did not on a loaded machine.
        const env = { ...fastClusterEnv(), GENESIS_INTEGRATOR_TTL_MS: '15000' };
        const worker = startCli(['worker', '--redis', url, '--json', '--concurrency', '2'], env);
        await worker.waitFor(/"type":"ready"/);
        const run = startCli(['run', '--world', f.world.path, '--redis', url, '--json'], env);
        await run.waitFor(/"type":"episode-start"/);
        redis.kill('SIGTERM');
        await new Promise((r) => redis.once('exit', r));
        await new Promise((r) => setTimeout(r, 1500));
        redis = startRedis();
        expect(await within(run.exited, 120_000)).toBe(0);
        expect(await checkWorldInvariants(f, tasks)).toEqual([]);
        worker.child.kill('SIGTERM');
      } finally {
        redis.kill('SIGKILL');
      }
    },
    160_000,
  );

  itWith('redis')(
    'releases the path leases a killed scheduler left behind, so their tasks are not left unschedulable',
    async () => {
      const { f, tasks } = await makeTaskWorld(2, 200, 2);
      const env = fastClusterEnv();
      const redis = await connectRedis(REDIS);
      try {
        // A scheduler killed between closing an episode's record (or before writing it) and releasing its lease left
        // these; they live long enough here that only a release frees their paths during the run.
        const leases = new RedisPathLeases(redis, worldKeyOf('fixture', f.world.path), { ttlMs: 600_000 });
        expect(await leases.tryAcquire('20261201-000000-000-dead01', ['src/t1.js'])).toBe(true);
        expect(await leases.tryAcquire('20261201-000000-000-dead02', ['src/t2.js'])).toBe(true);
        const worker = startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '2'], env);
        await worker.waitFor(/"type":"ready"/);
        const run = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
        // Before, every start was refused, nothing ran, and the run stopped at once as blocked (exit 3).
        expect(await within(run.exited, 120_000), `${run.lines.join('\n')}\n${run.stderr()}`).toBe(0);
        expect(await checkWorldInvariants(f, tasks)).toEqual([]);
        expect(await leases.list()).toEqual([]);
        worker.child.kill('SIGTERM');
      } finally {
        redis.disconnect();
      }
    },
    180_000,
  );

  itWith('redis')('serves a world to a worker through a git URL, with a mirror of its own', async () => {
    const { f, tasks } = await makeTaskWorld(2, 200, 2);
    const env = { ...fastClusterEnv() };
    const cache = join(await tempDir('genesis-cache-'), 'mirrors');
    const worker = startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '2', '--cache-dir', cache], env);
    await worker.waitFor(/"type":"ready"/);
    const run = startCli(['run', '--world', f.world.path, '--remote', `file://${f.world.path}`, '--redis', REDIS, '--json'], env);
    expect(await within(run.exited, 60_000)).toBe(0);
    expect(await checkWorldInvariants(f, tasks)).toEqual([]);
    worker.child.kill('SIGTERM');
  });
});
