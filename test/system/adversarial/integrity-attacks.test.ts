import { readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/index.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { git } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readEpisodeHiddenLogs } from '../../../src/ledger/hidden-logs.js';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Attacks from the description of three classes: hidden tests that leak, inputs that brick a
 * world, and resources. One world whose agents (shell scripts in the bwrap agent sandbox, reporting
 * usage as Claude Code does) attack instead of working; an honest task beside them must land.
 * Each attack lands nothing, the run ends normally, and `genesis audit` holds.
 */
const SECRET_NAME = 'HIDDEN-NAME-5f2e';
const SECRET_VALUE = 'HIDDEN-VALUE-91c7';
const HIDDEN_TEST = `import test from 'node:test';
import assert from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
test('${SECRET_NAME}: no module says WRONG', () => {
  for (const f of readdirSync('src')) if (f.endsWith('.js')) assert.ok(!readFileSync('src/' + f, 'utf8').includes('WRONG'), '${SECRET_VALUE} in ' + f);
});
`;

const agentScript = `#!/bin/sh
usage() { printf '{"type":"result","usage":{"input_tokens":%s,"output_tokens":%s},"total_cost_usd":%s}\\n' "$1" "$2" "$3"; }
module() { mkdir -p src; printf "export const v = '%s';\\n" "$1" > "src/$GENESIS_TASK_ID.js"; }
nest() { node -e "const fs = require('node:fs'); process.chdir(process.argv[1]); for (let i = 0; i < 2100; i++) { fs.mkdirSync('d'); process.chdir('d'); } fs.writeFileSync('leaf.js', 'x');" "$1"; }
case "$GENESIS_TASK_ID" in
honest) module honest; usage 1000 100 0.01 ;;
# Class 4: hidden tests leak.
leak-holdout)
  # The second attempt looks for the first one's hidden output in its prompt and in every object
  # its workspace can read through the alternates, and writes what it found into its change.
  # The patterns are split so that this script, which the world holds, does not contain them.
  hits=$( (cat "$GENESIS_PROMPT_FILE"; git cat-file --batch-all-objects --batch 2>/dev/null) | grep -c -e "${SECRET_NAME.slice(0, 7)}""${SECRET_NAME.slice(7)}" -e "${SECRET_VALUE.slice(0, 7)}""${SECRET_VALUE.slice(7)}")
  printf "export const v = 'WRONG'; // attempt $GENESIS_ATTEMPT saw %s\\n" "$hits" > src/leak-holdout.js
  usage 10 10 0.001 ;;
print-host)
  printf 'cat /etc/passwd; ls /var/lib /home /root /srv; pwd; env; exit 1\\n' > src/print-host.sh
  usage 10 10 0.001 ;;
# Class 5: inputs that brick a world.
deep-ignored) module deep-ignored; mkdir -p node_modules; nest node_modules; usage 10 10 0.001 ;;
deep-in-paths) mkdir -p src/deep-in-paths; nest src/deep-in-paths; usage 10 10 0.001 ;;
reserved-root) module reserved-root; printf 'x\\n' > .genesis-holdout ;;
reserved-nested) mkdir -p src/reserved-nested/.Genesis-Holdout; printf 'x\\n' > src/reserved-nested/.Genesis-Holdout/a.test.js ;;
handoff-dir) module handoff-dir; rm PROGRESS.md; mkdir -p PROGRESS.md; printf 'x\\n' > PROGRESS.md/evil.js ;;
plan) mkdir -p tasks; printf 'tasks:\\n  - id: task-writer\\n    title: writes task files\\n    paths: ["tasks/**"]\\n' > tasks/plan.yaml ;;
plan-invalid) mkdir -p tasks; printf 'tasks:\\n  - id: 7\\n' > tasks/invalid.yaml ;;
task-writer) mkdir -p tasks; printf 'tasks: not a list\\n' > tasks/zz.yaml ;;
# Class 6: resources.
sparse) truncate -s 2G src/sparse.bin ;;
big-files) mkdir -p src/big-files; head -c 6291456 /dev/urandom > src/big-files/a.bin; head -c 6291456 /dev/urandom > src/big-files/b.bin ;;
negative-usage) usage -100000 -5 -50 ;;
absurd-usage) usage 1000000000000000 10 0.5 ;;
cost-lock) usage 10 10 99999 ;;
esac
`;

const ATTACKS = [
  'leak-holdout',
  'print-host',
  'deep-ignored',
  'deep-in-paths',
  'reserved-root',
  'reserved-nested',
  'handoff-dir',
  'plan-invalid',
  'sparse',
  'big-files',
  'negative-usage',
  'absurd-usage',
  'cost-lock',
];

let w: AttackedWorld;

function hostPasswdLines(): string[] {
  return readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .filter((line) => line.includes(':'));
}

beforeAll(async () => {
  const dirs = await attackRoot();
  await mkdir(join(dirs.root, 'holdout'));
  await writeFile(join(dirs.root, 'holdout', 'hidden.test.js'), HIDDEN_TEST);
  const honest = honestTask('honest');
  const deepIgnored = honestTask('deep-ignored');
  const manifest = {
    name: 'integrity-attacks',
    goal: { outcome: 'the honest modules exist', progressFile: 'PROGRESS.md', stop: { maxCostUsd: 1000 } },
    verify: {
      sandbox: 'bwrap',
      test: 'node --test test/base.test.js',
      timeoutSec: 60,
      holdout: { dir: '../holdout', command: 'node --test .genesis-holdout/' },
    },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'command', preset: 'claude-code', command: ['sh', '.genesis/agent.sh'], timeoutSec: 30, sandbox: 'bwrap' },
    retry: { maxAttempts: 2 },
    parallelism: 4,
    tasksDir: 'tasks',
    tasks: [
      honest.task,
      deepIgnored.task,
      { id: 'print-host', title: 'print-host', paths: ['src/print-host.sh'], check: 'sh src/print-host.sh' },
      { id: 'plan', title: 'plan', kind: 'planner', paths: ['tasks/**'] },
      ...ATTACKS.filter((id) => id !== 'deep-ignored' && id !== 'print-host').map((id) =>
        id === 'plan-invalid'
          ? { id, title: id, kind: 'planner', paths: ['tasks/**'] }
          : { id, title: id, paths: [`src/${id}/**`, `src/${id}.js`, `src/${id}.bin`] },
      ),
    ],
  };
  const files = { ...honest.files, ...deepIgnored.files, '.gitignore': 'node_modules/\n', 'PROGRESS.md': '# progress\n', '.genesis/agent.sh': agentScript };
  w = await runAttackedWorld({ root: dirs.root, manifest, files, sandbox: 'bwrap' });
}, 400_000);
afterAll(() => w?.dispose());

describe('attacks on the integrity of a world', () => {
  itWith('bwrap')('end normally: the honest tasks land, and nothing an attack did', () => {
    expect(w.summary.stop.kind).toBe('blocked');
    expect(w.history.map((c) => c.task ?? '(initial)').sort()).toEqual(['(initial)', 'deep-ignored', 'honest', 'plan']);
    expect(w.episodes.every((e) => e.status === 'final')).toBe(true);
    // deep-ignored's change is right: only its workspace attacks (2,100 nested ignored directories).
    for (const attack of [...ATTACKS.filter((a) => a !== 'deep-ignored'), 'task-writer'])
      expect(w.episodes.filter((e) => e.task === attack && e.outcome === 'accepted')).toEqual([]);
  });

  itWith('bwrap')('leave an accepted head that genesis audit passes', async () => {
    const report = await auditWorld({ world: w.world, sample: 0 });
    expect(report.findings.filter((f) => f.severity === 'violation')).toEqual([]);
  });

  describe('class 4: hidden tests do not leak', () => {
    itWith('bwrap')('keeps the hidden output out of the next prompt, the ledger and every object a workspace can read', async () => {
      const attempts = w.episodes.filter((e) => e.task === 'leak-holdout').sort((a, b) => a.attempt - b.attempt);
      expect(attempts.map((e) => e.reason)).toEqual(['holdout-failed', 'holdout-failed']);
      // The hidden step's record keeps whether it passed and nothing the hidden run chose (its count carried the file's length).
      for (const e of attempts)
        expect(e.gate?.steps.find((st) => st.hidden)).toMatchObject({ exitCode: 1, durationMs: 0, tests: null, timedOut: false, oomKilled: false });
      const honestHidden = w.episodeOf('honest').gate?.steps.find((st) => st.hidden);
      expect(honestHidden).toMatchObject({ exitCode: 0, durationMs: 0, tests: null });
      expect(w.episodeOf('honest').gate?.summary).toMatch(/holdout ok \(/);
      const second = await w.world.readFile(attempts[1]!.candidate!, 'src/leak-holdout.js');
      expect(second).toContain('attempt 2 saw 0');
      const everyObject = (await git(['cat-file', '--batch-all-objects', '--batch'], { cwd: w.world.path })).stdout;
      expect(everyObject).not.toContain(SECRET_NAME);
      expect(everyObject).not.toContain(SECRET_VALUE);
      // Kept for a person, where no workspace reaches.
      // (Its gate's or, for a change handed to the integration queue, the queue's verification's.)
      expect(await readEpisodeHiddenLogs(w.world, attempts[0]!.id)).toContain(SECRET_VALUE);
    });

    itWith('bwrap')("shows a failing check none of the host: not its users, its state dirs or the world's path", async () => {
      const e = w.episodes.find((x) => x.task === 'print-host')!;
      expect(e).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
      const log = (await new GitLedger(w.world.path).readArtifacts(e.id)).gateLog ?? '';
      expect(log).toContain('/work');
      for (const line of hostPasswdLines()) expect(log).not.toContain(line);
      expect(log).not.toContain(w.root);
      expect(log).not.toMatch(/^(docker|dpkg|apt)$/m);
    });
  });

  describe('class 5: no input bricks the world', () => {
    itWith('bwrap')(
      'lands a right change whose workspace holds 2,100 nested directories, removes it, and the next run starts',
      async () => {
        expect(w.episodeOf('deep-ignored')).toMatchObject({ outcome: 'accepted' });
        expect(w.episodes.filter((e) => e.task === 'deep-in-paths').every((e) => e.outcome === 'failed' || e.outcome === 'rejected')).toBe(true);
        expect(await readdir(join(w.world.scratchDir, 'episodes')).catch(() => [])).toEqual([]);
        const again = await runEmbedded({ world: w.world, sandbox: w.sandbox });
        expect(again.stop.kind).toBe('blocked');
      },
      120_000,
    );

    itWith('bwrap')('rejects names Genesis reserves, at the root or nested, in any case, naming them and no host path', () => {
      for (const [task, path] of [
        ['reserved-root', '.genesis-holdout'],
        ['reserved-nested', 'src/reserved-nested/.Genesis-Holdout/a.test.js'],
      ] as const) {
        const e = w.episodes.find((x) => x.task === task)!;
        expect(e).toMatchObject({ outcome: 'rejected', reason: 'reserved-name' });
        expect(e.message).toContain(path);
        expect(e.message).not.toContain(w.root);
      }
    });

    itWith('bwrap')('keeps the handoff file a regular file', () => {
      expect(w.episodes.find((e) => e.task === 'handoff-dir')).toMatchObject({ outcome: 'rejected', reason: 'not-a-regular-file' });
    });

    itWith('bwrap')('validates task files on every change: no task a plan adds can land an invalid one', async () => {
      expect(w.episodes.find((e) => e.task === 'plan-invalid')).toMatchObject({ outcome: 'rejected', reason: 'invalid-plan' });
      const writer = w.episodes.filter((e) => e.task === 'task-writer');
      expect(writer.length).toBeGreaterThan(0);
      expect(writer.every((e) => e.outcome === 'rejected' && e.reason === 'protected-path')).toBe(true);
      const head = await w.world.manifestAt('main');
      expect(head.tasks.map((t) => t.id)).toContain('task-writer');
    });
  });

  describe('class 6: resources', () => {
    itWith('bwrap')('rejects a 2 GB sparse file and two 6 MB files as size-limit, keeping no object over the limit', async () => {
      for (const task of ['sparse', 'big-files']) {
        const e = w.episodes.find((x) => x.task === task)!;
        expect(e).toMatchObject({ outcome: 'rejected', reason: 'size-limit', candidate: null });
      }
      const sizes = (await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], { cwd: w.world.path })).stdout
        .trim()
        .split('\n')
        .map(Number);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(1024 * 1024);
    });

    itWith('bwrap')('records what the gateway measured, and nonsense reports clamped at zero and flagged, so they buy no budget', () => {
      const negative = w.episodes.find((e) => e.task === 'negative-usage')!;
      // The agent called no model: the gateway measured nothing, whatever it printed.
      expect(negative).toMatchObject({ usageSource: 'wire', modelCalls: 0, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
      expect(negative.usageReported).toMatchObject({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
      expect(negative.usageProblems).toEqual(
        expect.arrayContaining([expect.stringMatching(/^costUsd was -50, below zero/), expect.stringMatching(/^inputTokens was -100000/)]),
      );
      const absurd = w.episodes.find((e) => e.task === 'absurd-usage')!;
      expect(absurd.usageProblems).toEqual([expect.stringMatching(/^usage-implausible: inputTokens was 1000000000000000, over the cap of one episode/)]);
      expect(absurd.usage).toMatchObject({ inputTokens: 0, costUsd: 0 });
      expect(absurd.usageReported).toMatchObject({ inputTokens: null, costUsd: 0.5 });
      // A cost that alone would spend the world's budget (maxCostUsd 1000) is not charged: the run did not stop on it.
      const lock = w.episodes.find((e) => e.task === 'cost-lock')!;
      expect(lock.usageProblems).toEqual([
        expect.stringMatching(/^usage-implausible: costUsd was 99999, over the cap of one episode \(agent.limits.maxCostUsd 100\)/),
      ]);
      expect(lock.usageReported?.costUsd).toBeNull();
      expect(lock.usage?.costUsd).toBe(0);
      expect(w.summary.stop.kind).not.toBe('budget');
      // The honest script prints a report but calls no model: only the disagreement with the measurement is flagged.
      expect(w.episodes.find((e) => e.task === 'honest')?.usageProblems).toEqual([
        'the agent reported 1000 input tokens; 0 were measured on the wire',
        'the agent reported 100 output tokens; 0 were measured on the wire',
      ]);
      expect(w.episodes.every((e) => (e.usage?.costUsd ?? 0) >= 0 && (e.usage?.inputTokens ?? 0) >= 0)).toBe(true);
    });
  });
});

/**
 * Class 6, last variant: an agent that is not sandboxed (`agent.sandbox: none`) writes
 * `refs/replace/*` into the world, so that git would read a protected test, the manifest or the
 * accepted head as something else. Genesis runs git with GIT_NO_REPLACE_OBJECTS=1, so its gate
 * sees the real objects; audit names the replace refs, and holds once they are gone.
 */
const replaceScript = `#!/bin/sh
W="$(dirname "$(cat .git/objects/info/alternates)")"
G() { git --git-dir="$W" "$@"; }
wrong() { printf "export const v = 'wrong';\\n" > "src/$GENESIS_TASK_ID.js"; }
case "$GENESIS_TASK_ID" in
honest) sleep 2; printf "export const v = 'honest';\\n" > src/honest.js ;;
replace-test)
  fake=$(printf "import test from 'node:test';\\ntest('fine', () => {});\\n" | G hash-object -w --stdin)
  G replace -f "$(git rev-parse HEAD:test/replace-test.test.js)" "$fake"
  wrong ;;
replace-manifest)
  orig=$(git rev-parse HEAD:world.yaml)
  fake=$(G cat-file blob "$orig" | sed 's#check: node --test test/replace-manifest.test.js#check: "true"#' | G hash-object -w --stdin)
  G replace -f "$orig" "$fake"
  wrong ;;
replace-commit)
  export GIT_INDEX_FILE="$PWD/../forge.index" GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@x
  head=$(G rev-parse refs/heads/main)
  G read-tree "$head"
  printf "import test from 'node:test';\\ntest('fine', () => {});\\n" | G hash-object -w --stdin > ../fake
  G update-index --cacheinfo "100644,$(cat ../fake),test/replace-commit.test.js"
  forged=$(echo forged | G commit-tree "$(G write-tree)" -p "$head^" 2>/dev/null || echo forged | G commit-tree "$(G write-tree)")
  G replace -f "$head" "$forged"
  unset GIT_INDEX_FILE
  wrong ;;
esac
`;

describe('refs/replace swaps by an agent that is not sandboxed (class 6)', () => {
  const TASKS = ['replace-test', 'replace-manifest', 'replace-commit'];
  let r: AttackedWorld;
  beforeAll(async () => {
    const dirs = await attackRoot();
    const tasks = ['honest', ...TASKS].map((id) => honestTask(id));
    const manifest = {
      name: 'replace-attacks',
      goal: { outcome: 'the honest module exists' },
      verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 30 },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      agent: { kind: 'command', command: ['sh', '.genesis/agent.sh'], timeoutSec: 20, sandbox: 'none' },
      retry: { maxAttempts: 1 },
      parallelism: 1,
      tasks: tasks.map((t) => t.task),
    };
    const files = Object.assign({ '.genesis/agent.sh': replaceScript }, ...tasks.map((t) => t.files)) as Record<string, string>;
    r = await runAttackedWorld({ root: dirs.root, manifest, files, sandbox: 'bwrap' });
  }, 200_000);
  afterAll(() => r?.dispose());

  itWith('bwrap')('judges the real objects: every swap is rejected by the test it tried to hide, and the honest task lands', async () => {
    expect(r.history.map((c) => c.task)).toEqual(['honest', null]);
    for (const task of TASKS) expect(r.episodeOf(task)).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
    const replaced = (await git(['for-each-ref', '--format=%(refname)', 'refs/replace/'], { cwd: r.world.path })).stdout.split('\n').filter(Boolean);
    expect(replaced).toHaveLength(3);
  });

  itWith('bwrap')(
    'audit names every replace ref, and holds, every commit verified again, once they are deleted',
    async () => {
      const report = await auditWorld({ world: r.world, sample: 0 });
      const violations = report.findings.filter((f) => f.severity === 'violation');
      expect(violations.map((f) => f.code)).toEqual(['replace-ref', 'replace-ref', 'replace-ref']);
      const refs = (await git(['for-each-ref', '--format=%(refname)', 'refs/replace/'], { cwd: r.world.path })).stdout.split('\n').filter(Boolean);
      for (const ref of refs) {
        expect(violations.some((f) => f.message.startsWith(ref))).toBe(true);
        await git(['update-ref', '-d', ref], { cwd: r.world.path });
      }
      const after = await auditWorld({ world: r.world, sandbox: r.sandbox });
      expect(after.reverified.commits).toBe(2);
      expect(after.violations).toBe(0);
    },
    120_000,
  );
});
