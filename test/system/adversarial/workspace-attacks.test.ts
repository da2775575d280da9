import { existsSync, readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { git } from '../../../src/git/git.js';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * One world, one task per attack, each worked by a command agent (a shell script) that attacks
 * instead of working; one honest task beside them must still land. Gates run in bubblewrap.
 */
const agentScript = (markers: string) => `#!/bin/sh
M='${markers}'
own() { mkdir -p "$(dirname "$1")"; printf "export const v = 1;\\n" > "$1"; }
case "$GENESIS_TASK_ID" in
honest) printf "export const v = 'honest';\\n" > src/honest.js ;;
edit-protected-test)
  own src/edit-protected-test.js
  printf "import test from 'node:test';\\ntest('fine', () => {});\\n" > test/honest.test.js ;;
delete-protected-test)
  own src/delete-protected-test.js
  rm test/base.test.js ;;
edit-manifest)
  own src/edit-manifest.js
  sed -i 's/^  test: .*/  test: "true"/' world.yaml ;;
symlink-out)
  mkdir -p src/symlink-out
  ln -s /etc/passwd src/symlink-out/passwd
  ln -s ../../.. src/symlink-out/up ;;
odd-names)
  mkdir -p src/odd-names
  printf x > 'src/odd-names/..\\..\\..\\escaped.js'
  printf x > 'src/odd-names/new
line.js' ;;
write-outside)
  printf x > ../../escaped-2-up.txt
  printf x > ../escaped-1-up.txt
  printf x > "$M/escaped-absolute.txt" ;;
git-hooks)
  hooks="$(pwd)/.git/hooks"
  for h in pre-commit prepare-commit-msg commit-msg post-commit post-checkout post-merge pre-push pre-rebase pre-auto-gc post-rewrite reference-transaction post-index-change fsmonitor-watchman; do
    printf '#!/bin/sh\\ntouch "%s/hook-%s"\\n' "$M" "$h" > "$hooks/$h"
    chmod +x "$hooks/$h"
  done
  git config core.hooksPath "$hooks"
  git config core.fsmonitor "$hooks/fsmonitor-watchman"
  git config filter.evil.clean "touch $M/config-filter-clean; cat"
  git config filter.evil.smudge "touch $M/config-filter-smudge; cat"
  git config filter.evil.required true
  git config diff.external "$hooks/pre-commit"
  git config core.pager "touch $M/config-pager; cat"
  printf '* filter=evil\\n' > .git/info/attributes
  # Proof that the attack was armed, under names the never-run checks below do not match.
  cp .git/config "$M/armed-config"
  printf "export const v = 'wrong';\\n" > src/git-hooks.js ;;
gitattributes-filter)
  printf '* filter=evil\\n' > .gitattributes
  own src/gitattributes-filter/file.js
  printf '* filter=evil diff=evil merge=evil\\n' > src/gitattributes-filter/.gitattributes
  git config filter.evil.clean "touch $M/attributes-filter-clean; cat"
  git config filter.evil.smudge "touch $M/attributes-filter-smudge; cat" ;;
oversize) head -c 4096 /dev/zero | tr '\\0' x > src/oversize.js ;;
never-exits) exec sleep 600 ;;
esac
`;

const ATTACKS = [
  'edit-protected-test',
  'delete-protected-test',
  'edit-manifest',
  'symlink-out',
  'odd-names',
  'write-outside',
  'git-hooks',
  'gitattributes-filter',
  'oversize',
  'never-exits',
];

let w: AttackedWorld;
let markers: string;

beforeAll(async () => {
  const dirs = await attackRoot();
  markers = dirs.markers;
  await writeFile(join(dirs.root, 'agent.sh'), agentScript(markers));
  const honest = honestTask('honest');
  const gitHooks = honestTask('git-hooks');
  const manifest = {
    name: 'workspace-attacks',
    goal: { outcome: 'the honest module exists' },
    verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 30, maxFileKb: 1 },
    protected: ['test/**', 'world.yaml'],
    // Unconfined on purpose: these attacks aim at git and the gate, and leave their proof in a
    // markers directory a confined agent could not see (confinement-attacks.test.ts covers that).
    agent: { kind: 'command', command: ['sh', join(dirs.root, 'agent.sh')], timeoutSec: 4, sandbox: 'none' },
    retry: { maxAttempts: 1 },
    parallelism: 4,
    tasks: [
      honest.task,
      ...ATTACKS.map((id) =>
        id === 'git-hooks' ? gitHooks.task : { id, title: id, paths: [id === 'oversize' ? 'src/oversize.js' : `src/${id}/**`, `src/${id}.js`] },
      ),
    ],
  };
  w = await runAttackedWorld({ root: dirs.root, manifest, files: { ...honest.files, ...gitHooks.files }, sandbox: 'bwrap' });
}, 150_000);
afterAll(() => w?.dispose());

describe('a run attacked from inside its workspaces', () => {
  itWith('bwrap')('ends normally, lands the honest task, and blocks every attack after its one attempt', () => {
    expect(w.summary.stop.kind).toBe('blocked');
    expect(w.history.map((c) => c.task)).toEqual(['honest', null]);
    expect(w.episodes.filter((e) => e.outcome === 'accepted').map((e) => e.task)).toEqual(['honest']);
    expect(w.episodes.every((e) => e.status === 'final')).toBe(true);
  });

  itWith('bwrap')('rejects editing a protected test, naming it', () => {
    expect(w.episodeOf('edit-protected-test')).toMatchObject({ outcome: 'rejected', reason: 'protected-path' });
    expect(w.episodeOf('edit-protected-test').message).toContain('test/honest.test.js');
  });

  itWith('bwrap')('rejects deleting a protected test, naming it', () => {
    expect(w.episodeOf('delete-protected-test')).toMatchObject({ outcome: 'rejected', reason: 'protected-path' });
    expect(w.episodeOf('delete-protected-test').message).toContain('test/base.test.js');
  });

  itWith('bwrap')("rejects editing world.yaml's verify commands", async () => {
    expect(w.episodeOf('edit-manifest')).toMatchObject({ outcome: 'rejected', reason: 'protected-path' });
    expect(w.episodeOf('edit-manifest').message).toContain('world.yaml');
    expect(await w.world.readFile('main', 'world.yaml')).toContain('test: node --test test/base.test.js');
  });

  itWith('bwrap')('rejects symlinks that point out of the tree, naming their targets', () => {
    expect(w.episodeOf('symlink-out')).toMatchObject({ outcome: 'rejected', reason: 'symlink-escape' });
    expect(w.episodeOf('symlink-out').message).toMatch(/src\/symlink-out\/passwd -> \/etc\/passwd/);
  });

  itWith('bwrap')('rejects file names made to climb out of the tree or to break lines', () => {
    expect(w.episodeOf('odd-names')).toMatchObject({ outcome: 'rejected', reason: 'unsafe-path' });
    expect(w.episodeOf('odd-names').message).toContain('\\\\..\\\\');
  });

  itWith('bwrap')('takes nothing written outside the workspace into the change, and lands nothing', async () => {
    expect(w.episodeOf('write-outside')).toMatchObject({ outcome: 'failed', reason: 'empty-change', candidate: null, changedFiles: [] });
    const everywhere = (await git(['log', '--all', '--name-only', '--format='], { cwd: w.world.path })).stdout;
    // Every tree the world holds, the ledger's rejected candidates included.
    expect(everywhere).not.toMatch(/escaped-(1-up|2-up|absolute)/);
  });

  itWith('bwrap')("never runs hooks, filters or config an agent put in its workspace's .git", async () => {
    expect(w.episodeOf('git-hooks')).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
    expect(w.episodeOf('git-hooks').changedFiles).toEqual(['src/git-hooks.js']);
    expect(readFileSync(join(markers, 'armed-config'), 'utf8')).toMatch(/hooksPath[\s\S]*fsmonitor[\s\S]*clean = "touch/);
    expect(await readdir(markers)).not.toContainEqual(expect.stringMatching(/^(hook|config)-/));
  });

  itWith('bwrap')('rejects a .gitattributes filter, and never runs it', async () => {
    expect(w.episodeOf('gitattributes-filter')).toMatchObject({ outcome: 'rejected', reason: 'git-metadata' });
    expect(w.episodeOf('gitattributes-filter').message).toMatch(/\.gitattributes/);
    expect(await readdir(markers)).not.toContainEqual(expect.stringMatching(/^attributes-/));
  });

  itWith('bwrap')('rejects a file over the size limit, saying the limit', () => {
    expect(w.episodeOf('oversize')).toMatchObject({ outcome: 'rejected', reason: 'size-limit' });
    expect(w.episodeOf('oversize').message).toMatch(/over the limit of 1024 bytes per file: src\/oversize\.js \(4096 bytes\)/);
  });

  itWith('bwrap')('fails an agent that never exits at its time limit', () => {
    const e = w.episodeOf('never-exits');
    expect(e).toMatchObject({ outcome: 'failed', reason: 'agent-timeout' });
    expect(e.phases.agent).toBeLessThan(10_000);
  });

  itWith('bwrap')('leaves the marker of the direct write outside as the only trace of the attacks', () => {
    // The agent runs with sandbox: none here: what it writes itself is written.
    expect(existsSync(join(markers, 'escaped-absolute.txt'))).toBe(true);
  });
});
