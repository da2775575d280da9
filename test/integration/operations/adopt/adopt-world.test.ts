import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadScoredNames } from '../../../../src/gate/test-baseline.js';
import { ADOPTED_REF } from '../../../../src/world/history/adoption.js';
import { LocalWorld } from '../../../../src/world/local-world.js';
import { Publisher } from '../../../../src/world/publisher.js';
import { genesis } from '../../../helpers/genesis-cli.js';
import { projectHistory } from '../../../helpers/project-history.js';
import { createServerApp } from '../../../../src/server/create-app.js';
import { itWith } from '../../../helpers/services.js';
import { tempDir } from '../../../helpers/temp-dir.js';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/adopt');
const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();

const WORLD_YAML = stringify({
  name: 'lib',
  goal: { outcome: 'a library' },
  verify: { sandbox: 'bwrap', test: 'node --test test/' },
  agent: { kind: 'command', preset: 'claude-code' },
});
const ADD = 'exports.add = (a, b) => a + b;\n';
const ADD_TEST =
  "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../index.js');\ntest('adds', () => assert.equal(add(2, 3), 5));\n";

describe('genesis init --adopt', () => {
  itWith('bwrap')(
    "continues a real project's history: its head, verified with world.yaml added, is the first accepted commit and audit leaves the history alone",
    async () => {
      const dir = await tempDir('genesis-adopt-');
      const world = join(dir, 'minimist.world');
      const bundle = join(FIXTURES, 'minimist.bundle');
      const init = await genesis(['init', '--world', world, '--adopt', bundle, '--manifest', join(FIXTURES, 'minimist.world.yaml'), '--json']);
      expect(init.status, init.stderr).toBe(0);
      const out = JSON.parse(init.stdout);
      const sourceHead = execFileSync('git', ['bundle', 'list-heads', bundle], { encoding: 'utf8' }).split(' ')[0];
      expect(out).toMatchObject({ adopted: sourceHead, manifestAdded: true, historyCommits: 14, branch: 'main' });
      expect(out.verified).toMatch(/test ok \d+ passed 0 failed/);
      // The project's own commits are all still there, under the one Genesis added.
      expect(git(world, 'rev-list', '--count', 'main')).toBe('15');
      expect(git(world, 'rev-parse', 'main^')).toBe(sourceHead);
      expect(git(world, 'rev-parse', ADOPTED_REF)).toBe(out.commit);
      expect(git(world, 'log', '-1', '--format=%B', 'main')).toContain(`Genesis-Adopted: ${sourceHead}`);
      expect(git(world, 'diff', '--name-only', 'main^', 'main')).toBe('world.yaml');

      const audit = await genesis(['audit', '--world', world, '--json']);
      expect(audit.status, audit.stdout + audit.stderr).toBe(0);
      const report = JSON.parse(audit.stdout);
      expect(report).toMatchObject({ commits: 1, violations: 0, adoption: { commit: out.commit, historyCommits: 14 } });
      // log, show and the dashboard name the adoption commit and the history under it for what they are.
      const log = JSON.parse((await genesis(['log', '--world', world, '--json'])).stdout) as Array<{ made: string }>;
      expect(log.map((c) => c.made)).toEqual(['adopt', ...Array(14).fill('history')]);
      expect((await genesis(['show', '--world', world, 'main'])).stdout).toContain("the adopted repository's head, verified (genesis init --adopt)");
      expect((await genesis(['show', '--world', world, 'main~3'])).stdout).toContain("a commit of the adopted repository's own history, from before Genesis");
      const { app } = createServerApp({ world: await LocalWorld.open(world) });
      const shown = (await (await app.request('/api/history')).json()) as { commits: Array<{ made: string }> };
      expect(shown.commits.map((c) => c.made)).toEqual(log.map((c) => c.made));

      // After adoption the branch is judged as any world's: a commit pushed around the gate is a violation.
      const user = join(dir, 'clone');
      execFileSync('git', ['clone', '--quiet', world, user]);
      execFileSync(
        'sh',
        ['-c', 'echo "module.exports = 1" > index.js && git add -A && git -c user.name=x -c user.email=x@y commit -qm "by hand" && git push -q origin main'],
        { cwd: user },
      );
      const after = await genesis(['audit', '--world', world, '--sample', '0', '--json']);
      expect(after.status).toBe(7);
      expect(JSON.parse(after.stdout).findings.map((f: { code: string }) => f.code)).toContain('unattributed-commit');
    },
    240_000,
  );

  itWith('bwrap')(
    'takes a head that carries world.yaml itself as the first accepted commit, and publishes back as genesis/main without forcing',
    async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'lib');
      const commits = await projectHistory(source, [
        { message: 'start', files: { 'index.js': ADD, 'test/add.test.js': ADD_TEST } },
        { message: 'add world.yaml', files: { 'world.yaml': WORLD_YAML } },
      ]);
      const world = join(dir, 'lib.world');
      const init = await genesis(['init', '--world', world, '--adopt', source, '--json']);
      expect(init.status, init.stderr).toBe(0);
      expect(JSON.parse(init.stdout)).toMatchObject({ adopted: commits[1], commit: commits[1], manifestAdded: false, historyCommits: 2 });
      expect(git(world, 'rev-parse', 'main')).toBe(commits[1]);
      const audit = await genesis(['audit', '--world', world, '--json']);
      expect(audit.status, audit.stdout).toBe(0);
      // The head taken as it is is the adoption commit, though no Genesis trailer is on it.
      expect((JSON.parse((await genesis(['log', '--world', world, '--json'])).stdout) as Array<{ made: string }>).map((c) => c.made)).toEqual([
        'adopt',
        'history',
      ]);

      // An accepted change on top, then publish: to the user's repository.
      const repo = await LocalWorld.open(world);
      const tree = await repo.treeOf('main');
      const change = await repo.commitTree(tree, [commits[1]!], 'next: a change\n\nGenesis-Episode: e1\n');
      expect(await repo.compareAndSwap('refs/heads/main', change, commits[1]!)).toBe(true);
      const events: string[] = [];
      const publisher = new Publisher(repo, 'main', [{ url: source, ledger: false }], { adopted: true, onEvent: (e) => events.push(e.type) });
      publisher['markBehind']({ url: source, ledger: false });
      expect(await publisher.flush()).toEqual([]);
      expect(git(source, 'rev-parse', 'genesis/main')).toBe(change);
      expect(git(source, 'rev-parse', 'main')).toBe(commits[1]);

      // The user commits on genesis/main themselves: the next push fails instead of dropping their commit.
      execFileSync(
        'sh',
        ['-c', 'git checkout -q genesis/main && echo x > NOTE && git add NOTE && git -c user.name=x -c user.email=x@y commit -qm mine && git checkout -q main'],
        { cwd: source },
      );
      const theirs = git(source, 'rev-parse', 'genesis/main');
      const next = await repo.commitTree(tree, [change], 'next: another\n\nGenesis-Episode: e2\n');
      expect(await repo.compareAndSwap('refs/heads/main', next, change)).toBe(true);
      publisher['markBehind']({ url: source, ledger: false });
      expect(await publisher.flush()).toEqual([source]);
      publisher.close();
      expect(git(source, 'rev-parse', 'genesis/main')).toBe(theirs);
      expect(events).toContain('publish-failed');
    },
    120_000,
  );

  itWith('bwrap')(
    "keeps a ratchet world's scored tests from the adopted head, so a test an agent's code registers raises no score",
    async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'lib');
      const ratchetYaml = stringify({ ...parse(WORLD_YAML), verify: { sandbox: 'bwrap', test: 'node --test test/', mode: 'ratchet' } });
      await projectHistory(source, [{ message: 'start', files: { 'index.js': ADD, 'test/add.test.js': ADD_TEST, 'world.yaml': ratchetYaml } }]);
      const world = join(dir, 'lib.world');
      const init = await genesis(['init', '--world', world, '--adopt', source, '--json']);
      expect(init.status, init.stderr).toBe(0);
      const repo = await LocalWorld.open(world);
      expect(await loadScoredNames(repo.scratchDir, await repo.treeOf('main'))).toEqual(['adds']);
    },
    120_000,
  );

  itWith('bwrap')(
    'refuses a source it cannot read, a missing branch, and a head that fails its gate, leaving nothing behind',
    async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'lib');
      await projectHistory(source, [
        { message: 'start', files: { 'index.js': 'exports.add = (a, b) => a - b;\n', 'test/add.test.js': ADD_TEST, 'world.yaml': WORLD_YAML } },
      ]);
      const world = join(dir, 'w');
      const missing = await genesis(['init', '--world', world, '--adopt', join(dir, 'nope')]);
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('does not exist');
      const branch = await genesis(['init', '--world', world, '--adopt', source, '--branch', 'trunk']);
      expect(branch.stderr).toContain('could not fetch branch "trunk"');
      expect(existsSync(world)).toBe(false);
      const failing = await genesis(['init', '--world', world, '--adopt', source]);
      expect(failing.status).not.toBe(0);
      expect(failing.stderr).toContain('does not pass the gate');
      expect(existsSync(world)).toBe(false);

      // A program the sandbox lacks is named, with the ways out, as init names it.
      const manifest = join(dir, 'tool.yaml');
      writeFileSync(manifest, stringify({ ...parse(WORLD_YAML), verify: { sandbox: 'bwrap', test: 'genesis-no-such-tool --test' } }));
      const tool = join(dir, 'tool');
      await projectHistory(tool, [{ message: 'start', files: { 'index.js': ADD } }]);
      const lacking = await genesis(['init', '--world', world, '--adopt', tool, '--manifest', manifest]);
      expect(lacking.stderr).toContain('verify.test needs genesis-no-such-tool');
      expect(lacking.stderr).toContain('[gate-program-missing]');
      expect(existsSync(world)).toBe(false);
    },
    120_000,
  );
  describe("the source's HEAD branch, a head run again before it is refused (no sandbox: a marker outside the tree counts the runs)", () => {
    const yaml = stringify({ ...parse(WORLD_YAML), verify: { sandbox: 'none', test: 'node --test test/' } });
    // Fails the first time it runs on this machine, as a suite under load does, and passes after.
    const failsOnce = (marker: string) =>
      `const test = require('node:test');\nconst fs = require('node:fs');\ntest('adds under load', () => { if (!fs.existsSync(${JSON.stringify(marker)})) { fs.writeFileSync(${JSON.stringify(marker)}, ''); throw new Error('Timeout of 2000ms exceeded'); } });\n`;

    it('takes the branch the source HEAD names (master here), and adopts a head that fails once and passes when run again', async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'lib');
      await projectHistory(source, [{ message: 'start', files: { 'index.js': ADD, 'test/add.test.js': failsOnce(join(dir, 'ran')), 'world.yaml': yaml } }]);
      git(source, 'branch', '-m', 'main', 'master');
      const world = join(dir, 'lib.world');
      const init = await genesis(['init', '--world', world, '--adopt', source]);
      expect(init.status, init.stderr).toBe(0);
      expect(init.stdout).toContain(`adopted ${source} (master @ ${git(source, 'rev-parse', 'master').slice(0, 12)}`);
      expect(init.stdout).toContain('flaky: test');
    }, 120_000);

    it('refuses a head that fails twice, having run it exactly twice, naming the failing test and its first message line', async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'lib');
      const runs = join(dir, 'runs');
      // Counts its runs outside the tree, so the test shows the head was run once more and no more.
      const counted = ADD_TEST.replace("test('adds', () => ", `test('adds', () => require('node:fs').appendFileSync(${JSON.stringify(runs)}, 'x') || `);
      await projectHistory(source, [
        { message: 'start', files: { 'index.js': 'exports.add = (a, b) => a - b;\n', 'test/add.test.js': counted, 'world.yaml': yaml } },
      ]);
      const init = await genesis(['init', '--world', join(dir, 'w'), '--adopt', source]);
      expect(init.status).not.toBe(0);
      expect(init.stderr).toMatch(/does not pass the gate, run twice: test failed \(exit 1\): adds \(-1 == 5\)/);
      expect(readFileSync(runs, 'utf8')).toBe('xx');
      expect(existsSync(join(dir, 'w'))).toBe(false);
    }, 120_000);

    it('refuses a pytest head of its source’s own branch naming its one failing test, never the gate’s canaries', async () => {
      const dir = await tempDir('genesis-adopt-');
      const source = join(dir, 'calc');
      const python = stringify({ ...parse(WORLD_YAML), verify: { sandbox: 'none', test: 'python3 -B -m pytest -p no:cacheprovider -q tests' } });
      await projectHistory(source, [
        {
          message: 'start',
          files: {
            'calc.py': 'def grade(s):\n    return "pass" if s > 50 else "fail"\n',
            'tests/test_calc.py':
              'from calc import grade\n\n\ndef test_fifty():\n    assert grade(50) == "pass", "fifty passes"\n\n\ndef test_low():\n    assert grade(1) == "fail"\n',
            'world.yaml': python,
          },
        },
      ]);
      git(source, 'branch', '-m', 'main', 'trunk');
      const init = await genesis(['init', '--world', join(dir, 'w'), '--adopt', source]);
      expect(init.status).not.toBe(0);
      const said = init.stderr.split('\n').find((l) => l.startsWith('genesis: '));
      expect(said).toMatch(
        /\(trunk @ [0-9a-f]{12}\) does not pass the gate, run twice: test failed \(exit 1\): tests\/test_calc\.py > test_fifty \(AssertionError: fifty passes\) \[adopt-head-failed\]$/,
      );
    }, 120_000);
  });
});
