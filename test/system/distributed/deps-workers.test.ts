import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { DepsCache } from '../../../src/deps/cache/cache.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { depsManifest, SEMVER_FILES } from '../../helpers/deps-fixture.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const REDIS = 'redis://127.0.0.1:6379';

describe('distributed workers and verify.deps', () => {
  itWith('redis')('each worker prepares the set on a miss in its own cache, and gates there pass', { timeout: 240_000 }, async () => {
    process.env.GENESIS_CACHE_DIR = await tempDir('genesis-deps-init-');
    const manifest = depsManifest('bwrap', {}, { parallelism: 2 });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      files: SEMVER_FILES,
      recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 1500 }], b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: 1500 }] },
    });
    const env = { GENESIS_QUEUE_PREFIX: `test-${randomUUID()}`, GENESIS_LOCK_MS: '2000', GENESIS_STALLED_MS: '1000', GENESIS_RECONCILE_MS: '1000' };
    const caches = [await tempDir('genesis-deps-w1-'), await tempDir('genesis-deps-w2-')];
    const workers = caches.map((cache) => startCli(['worker', '--redis', REDIS, '--json'], { ...env, GENESIS_CACHE_DIR: cache }));
    try {
      await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
      const scheduler = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
      expect(await Promise.race([scheduler.exited, new Promise((r) => setTimeout(() => r('timeout'), 180_000))])).toBe(0);
      const episodes = await new GitLedger(f.world.path).readAll();
      expect(
        episodes
          .filter((e) => e.outcome === 'accepted')
          .map((e) => e.task)
          .sort(),
      ).toEqual(['a', 'b']);
      // Every worker that ran an episode installed the set into its own cache.
      let used = 0;
      for (const [i, w] of workers.entries()) {
        const ran = episodes.some((e) => e.worker?.includes(`:${w.child.pid}:`));
        const sets = await new DepsCache({ root: `${caches[i]}/deps` }).list();
        if (ran) {
          used++;
          expect(sets.map((s) => s.paths)).toEqual([['node_modules']]);
          // Its install was a wait the worker told, begun and ended (in text, a line with how long so far after 5 s).
          const waits = w.lines.filter((l) => l.includes('"type":"wait"')).map((l) => JSON.parse(l) as { what: string | null; worker: string });
          expect(waits.map((x) => x.what)).toEqual(expect.arrayContaining([expect.stringMatching(/^dependency set [0-9a-f]+ being installed \(/), null]));
        }
      }
      expect(used).toBeGreaterThan(0);
      // The scheduler tells the workers' waits as its own: the install begins and ends on its output too.
      const told = scheduler.lines.filter((l) => l.includes('"type":"wait"')).map((l) => JSON.parse(l) as { id: string; what: string | null });
      const installs = told.filter((x) => x.what !== null && /^dependency set [0-9a-f]+ being installed \(/.test(x.what));
      expect(installs.length).toBeGreaterThan(0);
      for (const install of installs) expect(told.some((x) => x.id === install.id && x.what === null)).toBe(true);
      // Named with the worker it happens on.
      for (const install of installs) expect(install.what).toMatch(/, on worker [^:\s]+:\d+:[a-z0-9]+$/);
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
    }
  });
});
