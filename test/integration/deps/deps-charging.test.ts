import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { useTempDepsCache } from '../../helpers/deps-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const cache = useTempDepsCache();

/**
 * A world whose install succeeds while deps.txt says "ok" and a host flag file (an outage) is
 * absent. verify.sandbox none, so the install can see the flag.
 */
async function flaggedWorld(flag: string, recording: Parameters<typeof makeWorld>[0]['recording']) {
  const deps = { files: ['deps.txt'], install: `test ! -e ${flag} && grep -qx ok deps.txt && mkdir vendor && cp deps.txt vendor/`, paths: ['vendor'] };
  const manifest = baseManifest({
    verify: {
      sandbox: 'none',
      deps,
      test: 'test -f vendor/deps.txt && node --test test/base.test.js',
      timeoutSec: 60,
      limits: { cpus: 1, memoryMb: 256, pids: 64 },
    },
    tasks: [
      { id: 'a', title: 'module a', paths: ['src/a.js', 'deps.txt'], check: 'node --test test/a.test.js' },
      { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js' },
    ],
    retry: { maxAttempts: 1 },
    parallelism: 1,
  });
  return makeWorld({ manifest, files: { 'deps.txt': 'ok\n' }, recording, sandbox: 'none' });
}

describe('who pays for a failed install', () => {
  it('charges the episode whose change broke the dependency files (deps-failed, with the install log)', async () => {
    const flag = join(await tempDir('genesis-flag-'), 'outage');
    const f = await flaggedWorld(flag, { a: [{ write: { 'src/a.js': GOOD_A, 'deps.txt': 'broken\n' } }], b: [{ write: { 'src/b.js': GOOD_B } }] });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const a = (await new GitLedger(f.world.path).readAll()).find((e) => e.task === 'a')!;
    expect(a).toMatchObject({ outcome: 'rejected', reason: 'deps-failed' });
    const log = (await new GitLedger(f.world.path).readArtifacts(a.id)).gateLog;
    expect(log).toContain('[deps ');
    expect(log).toMatch(/exit 1/);
  });

  it("does not charge an episode for an install that fails with the base's own files (an outage)", async () => {
    const flag = join(await tempDir('genesis-flag-'), 'outage');
    const f = await flaggedWorld(flag, { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] });
    // This worker lost its cache, and the registry is down.
    await rm(cache.root(), { recursive: true, force: true });
    await writeFile(flag, '');
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.length).toBeGreaterThan(0);
    for (const e of episodes) expect(e).toMatchObject({ outcome: 'abandoned', reason: 'broken-base' });
    expect(episodes[0]!.message).toContain('did not touch');
    expect(summary.accepted).toBe(0);
  });
});
