import { readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runGate } from '../../../src/gate/gate.js';
import { planGate } from '../../../src/gate/plan.js';
import { DepsCache } from '../../../src/deps/cache/cache.js';
import { itWith } from '../../helpers/services.js';
import { depsManifest, SEMVER_FILES, useTempDepsCache } from '../../helpers/deps-fixture.js';
import { makeWorld } from '../../helpers/world-fixture.js';

const cache = useTempDepsCache();

for (const kind of ['docker', 'bwrap'] as const) {
  describe(`a world with verify.deps under ${kind}`, () => {
    itWith(kind)('installs the set once, then every gate finds it and sees it read-only', async () => {
      const probe =
        'node --test test/base.test.js && mkdir node_modules/.cache && touch node_modules/.cache/ok && ! touch node_modules/semver/x 2>/dev/null && echo PROBE-OK';
      const f = await makeWorld({ sandbox: kind, manifest: depsManifest(kind), files: SEMVER_FILES, recording: {} });
      const sets = await new DepsCache({ root: cache.root() }).list();
      expect(sets.map((s) => s.paths)).toEqual([['node_modules']]);
      expect(sets[0]!.bytes).toBeGreaterThan(10_000);
      const manifest = await f.world.manifestAt(f.commit);
      const steps = [...planGate(manifest, null, new Set()), { name: 'probe', command: probe }];
      const verdict = await runGate({
        repo: f.world.path,
        tree: await f.world.treeOf(f.commit),
        steps,
        manifest,
        sandbox: f.sandbox,
        workDir: `${f.world.scratchDir}/gates/again`,
      });
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.log).toContain('already prepared on this machine');
      expect(verdict.log).toContain('PROBE-OK');
      expect(verdict.record.steps[0]).toMatchObject({ name: 'deps', exitCode: 0 });
      // The hit was found, not installed again: still one set, and the install ran once.
      expect(await readdir(`${cache.root()}/sets`)).toHaveLength(1);
    });

    itWith(kind)('never judges with a set damaged after it was prepared: the gate that finds it runs again on a fresh one', async () => {
      const probe = 'test ! -e node_modules/semver/tampered.js && echo SET-CLEAN';
      const f = await makeWorld({ sandbox: kind, manifest: depsManifest(kind), files: SEMVER_FILES, recording: {} });
      const [set] = await new DepsCache({ root: cache.root() }).list();
      // Between two gates, something with root's rights writes into the prepared set.
      await writeFile(join(set!.dir, 'node_modules/semver/tampered.js'), 'module.exports = 1;\n');
      const manifest = await f.world.manifestAt(f.commit);
      const verdict = await runGate({
        repo: f.world.path,
        tree: await f.world.treeOf(f.commit),
        steps: [...planGate(manifest, null, new Set()), { name: 'probe', command: probe }],
        manifest,
        sandbox: f.sandbox,
        workDir: `${f.world.scratchDir}/gates/damaged`,
      });
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.log).toContain('changed after it was prepared');
      expect(verdict.log).toContain('SET-CLEAN');
      const [fresh] = await new DepsCache({ root: cache.root() }).list();
      expect(await readdir(join(fresh!.dir, 'node_modules/semver'))).not.toContain('tampered.js');
    });

    itWith(kind)('charges no change for a link out of the set that something put there after it was prepared', async () => {
      const f = await makeWorld({ sandbox: kind, manifest: depsManifest(kind), files: SEMVER_FILES, recording: {} });
      const [set] = await new DepsCache({ root: cache.root() }).list();
      await symlink('/', join(set!.dir, 'node_modules/escape'));
      const manifest = await f.world.manifestAt(f.commit);
      const verdict = await runGate({
        repo: f.world.path,
        tree: await f.world.treeOf(f.commit),
        steps: planGate(manifest, null, new Set()),
        manifest,
        sandbox: f.sandbox,
        workDir: `${f.world.scratchDir}/gates/linked`,
      });
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.log).toContain('changed after it was prepared');
      const [fresh] = await new DepsCache({ root: cache.root() }).list();
      expect(await readdir(join(fresh!.dir, 'node_modules'))).not.toContain('escape');
    });
  });
}
