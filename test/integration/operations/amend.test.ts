import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { loadBaseline } from '../../../src/gate/test-baseline.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld, type RecordingSteps } from '../../helpers/world-fixture.js';
import { genesis } from '../../helpers/genesis-cli.js';

const C_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { c } from '../src/c.js';\ntest('c says c', () => assert.equal(c(), 'c'));\n";
const GOOD_C = "export const c = () => 'c';\n";

/** A world where task a is done, and a person's clone of it to edit. */
async function doneWorld(recording: RecordingSteps = {}) {
  const f = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
    recording: { a: [{ write: { 'src/a.js': GOOD_A } }], ...recording },
  });
  const run = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
  expect(run.status, run.stdout + run.stderr).toBe(0);
  const clone = join(await tempDir('genesis-amend-'), 'clone');
  execFileSync('git', ['clone', '-q', f.world.path, clone]);
  return { ...f, clone };
}

async function editManifest(dir: string, change: (m: Record<string, any>) => void): Promise<void> {
  const manifest = parse(await readFile(join(dir, 'world.yaml'), 'utf8'));
  change(manifest);
  await writeFile(join(dir, 'world.yaml'), stringify(manifest));
}

describe('genesis amend', () => {
  itWith('bwrap')(
    "lands a person's change to protected tests and world.yaml, with a Genesis-Amend trailer the audit accepts, and the next run does the new task",
    async () => {
      const f = await doneWorld({ c: [{ write: { 'src/c.js': GOOD_C } }] });
      const before = await f.world.head('main');
      // A new task with its acceptance test (test/** is protected), and a stricter test of a.
      await writeFile(join(f.clone, 'test/c.test.js'), C_TEST);
      await writeFile(
        join(f.clone, 'test/a.test.js'),
        `${await readFile(join(f.clone, 'test/a.test.js'), 'utf8')}test('a is stable', () => assert.equal(a(), a()));\n`,
      );
      await editManifest(f.clone, (m) => m.tasks.push({ id: 'c', title: 'module c', paths: ['src/c.js'], check: 'node --test test/c.test.js' }));

      const dry = await genesis([
        'amend',
        '--world',
        f.world.path,
        '--from',
        f.clone,
        '--message',
        'add task c and its test',
        '--dry-run',
        '--sandbox',
        'bwrap',
      ]);
      expect(dry.status, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('+++ b/test/c.test.js');
      expect(dry.stdout).toMatch(/gate: passes/);
      expect(dry.stdout).toContain('new tasks: c');
      expect(await f.world.head('main')).toBe(before);

      const landed = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'add task c and its test', '--sandbox', 'bwrap']);
      expect(landed.status, landed.stderr).toBe(0);
      const [head] = await readAcceptedHistory(f.world.path, 'main');
      expect(head).toMatchObject({ subject: 'add task c and its test', episode: null, amend: expect.stringMatching(/: add task c and its test$/) });
      expect(head!.parents).toEqual([before]);
      expect(head!.verified).toMatch(/check:a ok/);
      expect(await f.world.readFile(head!.commit, 'test/c.test.js')).toBe(C_TEST);
      expect(await f.world.readFile(head!.commit, '.git/HEAD')).toBeNull();

      const audit = await genesis(['audit', '--world', f.world.path, '--sandbox', 'bwrap']);
      expect(audit.status, audit.stdout + audit.stderr).toBe(0);
      const run = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      const episodes = await new GitLedger(f.world.path).readAll();
      expect(episodes.map((e) => [e.task, e.outcome])).toEqual([
        ['a', 'accepted'],
        ['c', 'accepted'],
      ]);
      // c's agent was told every command its change would be judged by, a's check (a is done) included.
      expect((await new GitLedger(f.world.path).readArtifacts(episodes[1]!.id)).prompt).toContain(
        '  - test: node --test test/base.test.js\n  - check:a: node --test test/a.test.js\n  - check:c: node --test test/c.test.js\n',
      );
    },
    // Two runs, two amends and an audit: longer than the default timeout on a loaded machine.
    180_000,
  );

  itWith('bwrap')("rejects a tree that breaks a done task's check or has an invalid manifest, and leaves the branch as it was", async () => {
    const f = await doneWorld();
    const head = await f.world.head('main');
    execFileSync('git', ['-C', f.clone, 'reset', '-q', '--hard', 'HEAD~1']); // a clone of the head before a landed
    await writeFile(join(f.clone, 'src/a.js'), BAD_A);
    // Made before a landed, it would undo a's module: refused, naming the file and both ways out.
    const stale = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'break a', '--dry-run', '--sandbox', 'bwrap']);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(
      /was made on [0-9a-f]{12}, 1 accepted commit\(s\) behind the head [0-9a-f]{12}, and it conflicts with what landed since in src\/a\.js \[amend-conflict\]/,
    );
    expect(stale.stderr).toMatch(/git pull there.*--force/);
    const dry = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'break a', '--dry-run', '--force', '--sandbox', 'bwrap']);
    expect(dry.status).toBe(1);
    expect(dry.stdout).toMatch(/gate: rejects \(check-failed: check:a failed/);
    expect(dry.stderr).toMatch(/warning: .* 1 accepted commit\(s\) behind the head [0-9a-f]{12}: --force lands its tree as it is, undoing what landed since/);
    const wet = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'break a', '--force', '--sandbox', 'bwrap']);
    expect(wet.status).toBe(1);
    expect(wet.stderr).toContain('[amend-rejected]');

    await writeFile(join(f.clone, 'src/a.js'), GOOD_A);
    await editManifest(f.clone, (m) => (m.retry = { maxAttempts: 'many' }));
    const invalid = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'bad yaml', '--sandbox', 'bwrap']);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toContain('[amend-invalid-manifest]');
    expect(invalid.stderr).toContain('retry.maxAttempts');
    // The amended manifest's own rules judge it: a verify.test the person broke rejects the tree.
    await editManifest(f.clone, (m) => {
      m.retry = { maxAttempts: 2 };
      m.verify.test = 'node -e "process.exit(3)"';
    });
    const ownRules = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'new test command', '--dry-run', '--sandbox', 'bwrap']);
    expect(ownRules.status).toBe(1);
    expect(ownRules.stdout).toMatch(/gate: rejects \(.*test/);
    expect(ownRules.stdout).toMatch(/test exit 3/);
    expect(await f.world.head('main')).toBe(head);
  });

  itWith('bwrap')('accepts a new task whose check does not pass yet: checks of tasks not done do not run', async () => {
    const f = await doneWorld();
    await mkdir(join(f.clone, 'test'), { recursive: true });
    await writeFile(join(f.clone, 'test/c.test.js'), C_TEST); // src/c.js does not exist yet
    await editManifest(f.clone, (m) => m.tasks.push({ id: 'c', title: 'module c', paths: ['src/c.js'], check: 'node --test test/c.test.js' }));
    const landed = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'plan task c', '--sandbox', 'bwrap']);
    expect(landed.status, landed.stdout + landed.stderr).toBe(0);
    expect(landed.stdout).not.toContain('check:c');
    // What passed on the amended head is kept: the next gate compares with it instead of running the head's tests again.
    const amended = await f.world.treeOf(await f.world.head('main'));
    expect(await loadBaseline(f.world.scratchDir, amended)).toEqual({
      'node --test test/base.test.js': ['the world is sane'],
      'node --test test/a.test.js': ['a says a'],
    });
  });

  itWith('bwrap')('puts back a commit pushed to the accepted branch between runs, keeps it in quarantine, and says to use amend', async () => {
    const f = await doneWorld({ b: [{ write: { 'src/b.js': GOOD_B } }] });
    const head = await f.world.head('main');
    await writeFile(join(f.clone, 'src/a.js'), BAD_A); // pushed by hand, it would break a's check
    execFileSync('git', ['-C', f.clone, '-c', 'user.name=p', '-c', 'user.email=p@x', 'commit', '-qam', 'by hand']);
    execFileSync('git', ['-C', f.clone, 'push', '-q', 'origin', 'HEAD:main']);
    const pushed = await f.world.head('main');
    const run = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `moved outside Genesis to ${pushed.slice(0, 12)}; put back to ${head.slice(0, 12)}, the commit is kept at refs/genesis/quarantine/foreign-\\S+\\. To change the world by hand, land the change with .*amend`,
      ),
    );
    expect((await readAcceptedHistory(f.world.path, 'main')).map((c) => c.commit)).not.toContain(pushed);
    const kept = execFileSync('git', ['--git-dir', f.world.path, 'for-each-ref', '--format=%(objectname)', 'refs/genesis/quarantine/'], { encoding: 'utf8' });
    expect(kept).toContain(pushed);
    const audit = await genesis(['audit', '--world', f.world.path, '--sample', '0']);
    expect(audit.status, audit.stdout + audit.stderr).toBe(0);
  });

  itWith('bwrap')('lands through a running genesis run, and a push behind its back is put back with a hint to amend', async () => {
    // b's agent works a while and then fails: the run is still going when the amendment comes, and nothing of b lands.
    const f = await doneWorld({ b: [{ sleepMs: 3000, exit: 1 }] });
    await editManifest(f.clone, (m) => m.tasks.push({ id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js' }));
    const add = await genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'plan task b', '--sandbox', 'bwrap']);
    expect(add.status, add.stderr).toBe(0);
    execFileSync('git', ['-C', f.clone, 'fetch', '-q', 'origin']);
    execFileSync('git', ['-C', f.clone, 'reset', '-q', '--hard', 'origin/main']);

    const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    await run.waitFor(/▶ b attempt 1/);
    // The git user's way: commit and push to main while the run works.
    await writeFile(join(f.clone, 'notes.md'), 'pushed by hand\n');
    execFileSync('git', ['-C', f.clone, 'add', '-A']);
    execFileSync('git', ['-C', f.clone, '-c', 'user.name=p', '-c', 'user.email=p@x', 'commit', '-qm', 'by hand']);
    execFileSync('git', ['-C', f.clone, 'push', '-q', 'origin', 'HEAD:main']);
    const amending = genesis(['amend', '--world', f.world.path, '--from', f.clone, '--message', 'notes, the right way', '--sandbox', 'bwrap']);
    const moved = await run.waitFor(/moved outside Genesis/);
    expect(moved).toMatch(/land the change with (genesis|node \S*bin\/genesis\.js) amend/);
    expect(await run.exited).toBe(3);
    const amended = await amending;
    expect(amended.status, amended.stderr).toBe(0);
    expect(amended.stderr).toMatch(/waiting for the running scheduler to take the amendment \(pid \d+\), 0 s/);
    // The run took it while it worked: the run's own lines say so.
    expect(run.lines.join('\n')).toMatch(/✓ an amendment landed as [0-9a-f]{12}/);
    const history = await readAcceptedHistory(f.world.path, 'main');
    expect(history.map((c) => c.task ?? c.subject).slice(0, 3)).toEqual(['notes, the right way', 'plan task b', 'a']);
    expect(await f.world.readFile(history[0]!.commit, 'notes.md')).toBe('pushed by hand\n');
    await rm(f.clone, { recursive: true, force: true });
  });
});
