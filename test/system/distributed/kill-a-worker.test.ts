import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { planGate } from '../../../src/gate/plan.js';
import { runGate } from '../../../src/gate/gate.js';
import { worldKeyOf } from '../../../src/queue/bullmq/distributed-job.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld, type RecordingSteps } from '../../helpers/world-fixture.js';

const TASKS = ['t1', 't2', 't3', 't4', 't5', 't6'];
const REDIS = 'redis://127.0.0.1:6379';

describe('a distributed run with three workers, one killed mid-episode', () => {
  itWith('redis')(
    'ends with a linear history, each task done once, every episode recorded and no lease left',
    async () => {
      const files: Record<string, string> = {};
      const recording: RecordingSteps = {};
      for (const t of TASKS) {
        files[`test/${t}.test.js`] =
          `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${t}.js';\ntest('${t}', () => assert.equal(v, '${t}'));\n`;
        recording[t] = [{ write: { [`src/${t}.js`]: `export const v = '${t}';\n` }, sleepMs: 1500 }];
      }
      const manifest = baseManifest({
        parallelism: 3,
        verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 },
        tasks: TASKS.map((t) => ({ id: t, title: `module ${t}`, paths: [`src/${t}.js`], check: `node --test test/${t}.test.js` })),
      });
      const f = await makeWorld({ manifest, files, recording, sandbox: 'bwrap' });
      const env = { GENESIS_QUEUE_PREFIX: `test-${randomUUID()}`, GENESIS_LOCK_MS: '2000', GENESIS_STALLED_MS: '1000', GENESIS_RECONCILE_MS: '1000' };
      const workers = [0, 1, 2].map(() => startCli(['worker', '--redis', REDIS, '--json'], env));
      await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
      const scheduler = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);

      const victim = workers[0]!;
      const started = JSON.parse(await victim.waitFor(/"type":"start"/, 60_000)) as { episodeId: string };
      victim.child.kill('SIGKILL');

      expect(await Promise.race([scheduler.exited, new Promise((r) => setTimeout(() => r('timeout'), 150_000))])).toBe(0);
      const commits = await readAcceptedHistory(f.world.path, 'main');
      for (const c of commits) expect(c.parents.length).toBeLessThanOrEqual(1);
      expect(commits.flatMap((c) => (c.task ? [c.task] : [])).sort()).toEqual(TASKS);

      const episodes = await new GitLedger(f.world.path).readAll();
      expect(episodes.every((e) => e.status === 'final')).toBe(true);
      const killed = episodes.find((e) => e.id === started.episodeId);
      expect(killed?.outcome).toBe('accepted'); // picked up again by another worker after the stall
      expect(killed?.worker).not.toContain(`:${victim.child.pid}:`);
      // The worker that took the job over says so, naming the one that had it, on a line labelled with its own id.
      const ready = JSON.parse(victim.lines.find((l) => l.includes('"type":"ready"'))!) as { worker: string };
      const takeovers = workers
        .slice(1)
        .flatMap((w) => w.lines)
        .filter((l) => l.includes('"type":"takeover"'))
        .map((l) => JSON.parse(l) as { episodeId: string; from: string | null; worker: string });
      expect(takeovers).toContainEqual(expect.objectContaining({ episodeId: started.episodeId, from: ready.worker }));
      for (const t of takeovers) expect(t.worker).not.toBe(ready.worker);
      // The scheduler says so too, naming both workers: no silence between the kill and the landing.
      const holders = scheduler.lines.filter((l) => l.includes('"type":"episode-holder"')).map((l) => JSON.parse(l));
      expect(holders).toContainEqual(expect.objectContaining({ id: started.episodeId, was: ready.worker, worker: expect.not.stringMatching(ready.worker) }));

      for (const [i, c] of commits.entries()) {
        const m = await f.world.manifestAt(c.commit);
        const done = new Set(commits.slice(i).flatMap((o) => (o.task ? [o.task] : [])));
        const verdict = await runGate({
          repo: f.world.path,
          tree: await f.world.treeOf(c.commit),
          steps: planGate(m, null, done),
          manifest: m,
          sandbox: f.sandbox,
          workDir: `${f.world.scratchDir}/gates/recheck`,
        });
        expect(verdict.ok, verdict.ok ? '' : verdict.log).toBe(true);
      }
      const redis = await connectRedis(REDIS);
      try {
        expect(await new RedisPathLeases(redis, worldKeyOf('fixture', f.world.path)).list()).toEqual([]);
      } finally {
        redis.disconnect();
      }
      for (const w of workers.slice(1)) w.child.kill('SIGTERM');
      // The scheduler alone may take 150 s (above) on a loaded machine: the test's own limit is above it.
    },
    240_000,
  );
});
