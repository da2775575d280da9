import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { DepsCache } from '../../../src/deps/cache/cache.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { initWorld } from '../../../src/operations/init-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { useTempDepsCache } from '../../helpers/deps-fixture.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const TS_LIB = fileURLToPath(new URL('../../../worlds/ts-lib', import.meta.url));
const cache = useTempDepsCache();

describe('worlds/ts-lib, a TypeScript library with npm dependencies', () => {
  // bwrap: the quicker of the two on a shared machine; deps-gate.test.ts runs installs and mounts under docker too.
  itWith('bwrap')('is built to done by the script agent, the dependency change prepared before its gate', { timeout: 600_000 }, async () => {
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const root = await tempDir('genesis-ts-lib-');
    const init = await initWorld({ worldPath: join(root, 'ts-lib.world'), from: TS_LIB, sandbox: async () => sandbox });
    expect(init.gate.record.steps.map((s) => s.name)).toEqual(['deps', 'build', 'test']);
    const summary = await runEmbedded({ world: init.world, sandbox });
    expect(summary.stop.kind).toBe('evidence');
    expect(summary.evidence).toEqual({ command: 'npx vitest run', passed: true });

    const history = await readAcceptedHistory(init.world.path, 'main');
    expect(
      history
        .map((c) => c.task)
        .filter(Boolean)
        .sort(),
    ).toEqual(['case', 'index', 'slug', 'versions', 'words']);
    expect(history[0]!.task).toBe('index');
    expect(await init.world.readFile('main', 'package.json')).toContain('"semver": "7.6.3"');

    const episodes = await new GitLedger(init.world.path).readAll();
    const versions = episodes.filter((e) => e.task === 'versions');
    // Without the dependency tsc cannot find semver; with it, the new set is installed for the gate.
    expect(versions.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'rejected'],
      [2, 'accepted'],
    ]);
    expect(versions[0]).toMatchObject({ reason: 'build-failed', message: expect.stringContaining('build failed') });
    // Its gate ran with the set of the lockfile with semver, prepared before it: by this gate (npm ci in its log) or by
    // the gate of a change reserved behind it, on a tip holding it, that got to the set first (then 'found in the cache').
    const ledger = new GitLedger(init.world.path);
    const setIn = (log: string) => /deps: ([0-9a-f]{12}) (?:installed|found in the cache)/.exec(log)?.[1];
    const withSemver = setIn((await ledger.readArtifacts(versions[1]!.id)).gateLog ?? '');
    expect(withSemver).toMatch(/^[0-9a-f]{12}$/);
    expect(setIn(init.gate.log)).not.toBe(withSemver);
    // One set for the starting lockfile, one for the lockfile with semver: nothing else was installed, each set once.
    const sets = await new DepsCache({ root: cache.root() }).list();
    expect(sets).toHaveLength(2);
    expect(sets.map((s) => s.key.slice(0, 12))).toContain(withSemver);
    // The index task started from a base with semver: its workspace and gate found that set ready.
    const index = episodes.find((e) => e.task === 'index' && e.outcome === 'accepted')!;
    expect((await ledger.readArtifacts(index.id)).gateLog).toContain('already prepared on this machine');
  });
});
