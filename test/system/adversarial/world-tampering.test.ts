import { afterAll, beforeAll, describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/index.js';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * An agent that writes outside its workspace where it hurts most: the world repository itself.
 * Its workspace is a shared clone inside the world's scratch directory, and the clone's
 * alternates file names the world's object store, so `../../../../refs/heads/main` is the
 * accepted branch. The agent builds a commit nobody verified and writes it there.
 */
const agentScript = `#!/bin/sh
case "$GENESIS_TASK_ID" in
honest) sleep 1; printf "export const v = 'honest';\\n" > src/honest.js ;;
forge-branch)
  W="$(dirname "$(cat .git/objects/info/alternates)")"
  export GIT_AUTHOR_NAME=mallory GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=mallory GIT_COMMITTER_EMAIL=m@x
  base="$(cat ../../../../refs/heads/main)"
  blob="$(printf 'nobody verified this\\n' | git --git-dir="$W" hash-object -w --stdin)"
  export GIT_INDEX_FILE="$PWD/../forge.index"
  git --git-dir="$W" read-tree "$base"
  git --git-dir="$W" update-index --add --cacheinfo "100644,$blob,src/forged.js"
  commit="$(echo 'a forged change' | git --git-dir="$W" commit-tree "$(git --git-dir="$W" write-tree)" -p "$base")"
  printf '%s\\n' "$commit" > ../../../../refs/heads/main ;;
esac
`;

for (const agentSandbox of ['none', 'bwrap'] as const) {
  describe(`an agent that writes the accepted branch through ../../ (agent.sandbox: ${agentSandbox})`, () => {
    let w: AttackedWorld;
    beforeAll(async () => {
      const dirs = await attackRoot();
      const honest = honestTask('honest');
      const manifest = {
        name: `world-tampering-${agentSandbox}`,
        goal: { outcome: 'the honest module exists' },
        verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 30 },
        protected: ['test/**', 'world.yaml', '.genesis/**'],
        agent: { kind: 'command', command: ['sh', '.genesis/agent.sh'], timeoutSec: 10, sandbox: agentSandbox },
        retry: { maxAttempts: 1 },
        parallelism: 2,
        tasks: [honest.task, { id: 'forge-branch', title: 'forge', paths: ['src/forge-branch.js'] }],
      };
      w = await runAttackedWorld({ root: dirs.root, manifest, files: { ...honest.files, '.genesis/agent.sh': agentScript }, sandbox: 'bwrap' });
    }, 120_000);
    afterAll(() => w?.dispose());

    itWith('bwrap')('lands nothing: every commit after the first came through the gate', () => {
      expect(w.history.map((c) => c.task)).toContain('honest');
      const unverified = w.history.filter((c) => c.commit !== w.initial && c.episode === null);
      expect(
        unverified.map((c) => c.subject),
        'commits on the accepted branch that no episode brought',
      ).toEqual([]);
    });

    itWith('bwrap')('leaves a world that genesis audit passes, or one whose forged commit it names', async () => {
      const report = await auditWorld({ world: w.world, sample: 0 });
      const forged = w.history.find((c) => c.subject === 'a forged change');
      if (forged) expect(report.findings).toContainEqual(expect.objectContaining({ code: 'unattributed-commit', commit: forged.commit }));
      else expect(report.violations).toBe(0);
    });
  });
}
