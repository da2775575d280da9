import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { depsManifest, SEMVER_FILES, useTempDepsCache } from '../../helpers/deps-fixture.js';
import { itWith } from '../../helpers/services.js';
import { makeWorld } from '../../helpers/world-fixture.js';

useTempDepsCache();

// The agent runs the world's tests itself (they import semver), checks that its own git does not
// see the linked dependencies, and only then writes its change.
const AGENT = [
  'set -e',
  'node --test test/base.test.js',
  'test -z "$(git status --porcelain --ignored=no)"',
  'printf "export const a = () => \'a\';\\n" > src/a.js',
].join('\n');

for (const agentSandbox of ['none', 'bwrap'] as const) {
  describe(`a workspace of a world with verify.deps (agent sandbox ${agentSandbox})`, () => {
    itWith('bwrap')("starts with its base's dependencies, usable by the agent's own test runs, and never in the candidate", { timeout: 180_000 }, async () => {
      // No .gitignore: only Genesis keeps the linked node_modules out of git's sight.
      const { '.gitignore': _ignore, ...files } = SEMVER_FILES;
      const manifest = depsManifest(
        'bwrap',
        {},
        {
          agent: { kind: 'command', command: ['sh', '-c', AGENT], timeoutSec: 60, sandbox: agentSandbox },
          tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
        },
      );
      const f = await makeWorld({ sandbox: 'bwrap', manifest, files, recording: {} });
      const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
      const [episode] = await new GitLedger(f.world.path).readAll();
      const artifacts = await new GitLedger(f.world.path).readArtifacts(episode!.id);
      expect(episode, artifacts.agentLog).toMatchObject({ outcome: 'accepted', changedFiles: ['src/a.js'] });
      expect(summary.stop.kind).toBe('done');
      expect(artifacts.agentLog).toMatch(/deps: [0-9a-f]{12} linked into the workspace/);
      expect(await f.world.readFile('main', 'node_modules/semver/package.json')).toBeNull();
    });
  });
}
