import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { useTempDepsCache } from '../../helpers/deps-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld, type RecordingSteps } from '../../helpers/world-fixture.js';

useTempDepsCache();

const pkg = (version: string) => `${JSON.stringify({ name: 'p', version, type: 'module', dependencies: { left: '1.0.0' } }, null, 2)}\n`;
const lock = (version: string) =>
  `${JSON.stringify({ name: 'p', version, lockfileVersion: 3, packages: { '': { name: 'p', version, dependencies: { left: '1.0.0' } } } }, null, 2)}\n`;

/**
 * A world keyed on package.json and package-lock.json whose install (no sandbox, so it can count
 * itself in a host file) copies whichever of them it was given into vendor/; the test step needs vendor/.
 */
async function npmWorld(recording: RecordingSteps) {
  const installs = join(await tempDir('genesis-installs-'), 'count');
  const deps = {
    files: ['package.json', 'package-lock.json'],
    install: `echo x >> ${installs} && mkdir vendor && cp package*.json vendor/`,
    paths: ['vendor'],
  };
  const manifest = baseManifest({
    verify: {
      sandbox: 'none',
      deps,
      test: 'test -f vendor/package.json && node --test test/base.test.js',
      timeoutSec: 60,
      limits: { cpus: 1, memoryMb: 256, pids: 64 },
    },
    tasks: [
      { id: 'a', title: 'release 1.0.1', paths: ['src/a.js', 'package.json', 'package-lock.json'], check: 'node --test test/a.test.js' },
      { id: 'b', title: 'stop committing the lockfile', paths: ['src/b.js', 'package-lock.json'], check: 'node --test test/b.test.js', dependsOn: ['a'] },
    ],
    retry: { maxAttempts: 1 },
    parallelism: 1,
  });
  const f = await makeWorld({ manifest, files: { 'package.json': pkg('1.0.0'), 'package-lock.json': lock('1.0.0') }, recording, sandbox: 'none' });
  const count = async () => (await readFile(installs, 'utf8')).split('\n').filter(Boolean).length;
  return { ...f, count };
}

describe('the files that define a dependency set', () => {
  it('are read for what installs: a version bump finds the set, and a change that removes the lockfile lands', async () => {
    const f = await npmWorld({
      a: [{ write: { 'src/a.js': GOOD_A, 'package.json': pkg('1.0.1'), 'package-lock.json': lock('1.0.1') } }],
      b: [{ write: { 'src/b.js': GOOD_B }, delete: ['package-lock.json'] }],
    });
    expect(await f.count()).toBe(1);
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(
      episodes.map((e) => [e.task, e.outcome, e.reason ?? null]),
      episodes.map((e) => e.message).join('\n'),
    ).toEqual([
      ['a', 'accepted', null],
      ['b', 'accepted', null],
    ]);
    expect(summary.accepted).toBe(2);
    // The release found the set the first commit installed; only the lockfile's removal installed again.
    expect(await f.count()).toBe(2);
    const log = (await new GitLedger(f.world.path).readArtifacts(episodes[1]!.id)).gateLog;
    expect(log).toContain('"package-lock.json" of verify.deps.files is not in this tree; the set is the one the others define');
  });
});
