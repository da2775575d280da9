/**
 * Which passing tests of the head a change may rename or remove, for the names each runner
 * reports: the names come from the real runner run on the head (pinned as in runner-outputs),
 * the files from a real git repository. A test defined in a file the change edits is the change's
 * own; one a protected file defines stays guarded, even when the edited file happens to hold the
 * same titles.
 */
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { passingNames } from '../../../src/gate/reports/cases.js';
import { readStepReport } from '../../../src/gate/reports/read-report.js';
import { withoutOwnTests } from '../../../src/gate/own-tests.js';
import { vanishedTests } from '../../../src/gate/test-baseline.js';
import type { ChangedEntry } from '../../../src/git/tree/diff.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { installTestRunners, runnerOutput, writeProject } from '../../helpers/test-runners.js';

let modules: string;
beforeAll(async () => {
  modules = await installTestRunners();
}, 20 * 60_000);

/** A repository whose one commit holds the files; returns it and the commit. */
async function headOf(files: Record<string, string>, nodeModules: string | null): Promise<{ repo: string; head: string }> {
  const repo = await tempDir('genesis-own-');
  await writeProject(repo, files, nodeModules);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  git('add', '--', ...Object.keys(files));
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'head');
  return { repo, head: git('rev-parse', 'HEAD') };
}

const edits = (...paths: string[]): ChangedEntry[] => paths.map((path) => ({ path, change: 'modified', mode: '100644', size: 1 }));

/** The head's passing names, what the change may drop of them, and what it must still report. */
async function guarded(
  files: Record<string, string>,
  command: { run: string; args: string[] },
  change: { edited: string[]; protectedPaths: string[] },
  nodeModules: string | null = null,
): Promise<{ all: string[]; kept: string[] }> {
  const { repo, head } = await headOf(files, nodeModules);
  const { output } = await runnerOutput(command.run, command.args, repo);
  const read = await readStepReport({ output, truncated: false, workDir: repo, junit: null, required: false });
  const all = 'run' in read && read.run ? passingNames(read.run) : [];
  const kept = (await withoutOwnTests({ test: all }, { repo, head, changes: edits(...change.edited), protectedPaths: change.protectedPaths })).test ?? [];
  return { all, kept };
}

describe('a change renames the tests of a file it edits, and keeps the protected ones', () => {
  it("mocha (its titles joined with spaces, in spec, tap and json alike): the edited file's suites are its own, the protected file's are not, even under the same suite title", async () => {
    const files = {
      'test/json.test.js': `describe('bodyParser.json()', function () {
  it('should presist the body', function () {});
  describe('with limit', function () { it("should reject what's too large", function () {}); });
});
describe('protected suite', function () { it('keeps passing', function () {}); });
`,
      // A suite title the protected file shares with the edited one claims none of the edited file's tests.
      'test/accept/p.test.js': `describe('protected suite', function () { it('keeps passing', function () {}); it('stays', function () {}); });
describe('with limit', function () { it('is guarded', function () {}); });
`,
      'test/other.test.js': `describe('other', function () { it('untouched', function () {}); });\n`,
    };
    for (const reporter of ['spec', 'tap', 'json']) {
      const { all, kept } = await guarded(
        files,
        { run: `${modules}/.bin/mocha`, args: ['--reporter', reporter, '--recursive', 'test'] },
        { edited: ['test/json.test.js'], protectedPaths: ['test/accept/**'] },
        modules,
      );
      expect(all).toContain("bodyParser.json() with limit should reject what's too large");
      expect(kept).toEqual(['other untouched', 'protected suite keeps passing', 'protected suite stays', 'with limit is guarded']);
      // The cheat: the change also stops the protected suite; its tests are still asked for.
      expect(vanishedTests(kept, { passed: ['other untouched'], failed: [] }, false)).toEqual([
        'protected suite keeps passing',
        'protected suite stays',
        'with limit is guarded',
      ]);
    }
  });

  it('tape (assertions named by their message): the edited file holds them as literals', async () => {
    const { all, kept } = await guarded(
      {
        'a.test.js': `const test = require('tape');\ntest('a', (t) => { t.ok(true, 'presist works'); t.end(); });\n`,
        'p.test.js': `const test = require('tape');\ntest('p', (t) => { t.ok(true, 'p holds'); t.end(); });\n`,
      },
      { run: 'bash', args: ['-c', 'node a.test.js; node p.test.js'] },
      { edited: ['a.test.js'], protectedPaths: ['p.test.js'] },
      modules,
    );
    expect(all).toEqual(['p holds', 'presist works']);
    expect(kept).toEqual(['p holds']);
  });

  it("tape (an assertion without a message of its own, or with an object in its place): named after its method, its file is one that calls that method; a protected file's calls keep the name guarded", async () => {
    const files = {
      'test/parse.js': `const test = require('tape');
test('parse', (t) => {
  t.deepEqual({ a: 1 }, { a: 1 });
  t.deepEqual({ b: 1 }, { b: 1 }, { prototype: false });
  t.notOk(false);
  t.end();
});
`,
      'test/guard.js': `const test = require('tape');\ntest('guard', (t) => { t.ok(true); t.equal(1, 1, 'one is one'); t.end(); });\n`,
    };
    const run = { run: 'bash', args: ['-c', 'node test/parse.js; node test/guard.js'] };
    const { all, kept } = await guarded(files, run, { edited: ['test/parse.js'], protectedPaths: ['test/guard.js'] }, modules);
    expect(all).toEqual(['[object Object]', 'one is one', 'should be deeply equivalent', 'should be falsy', 'should be truthy']);
    expect(kept).toEqual(['one is one', 'should be truthy']);
    // The protected file's assertions given an object or no message are its own to keep: a name both files make stays guarded.
    const both = await guarded(
      { ...files, 'test/guard.js': `const test = require('tape');\ntest('guard', (t) => { t.deepEqual([], []); t.ok(true, { why: 'kept' }); t.end(); });\n` },
      run,
      { edited: ['test/parse.js'], protectedPaths: ['test/guard.js'] },
      modules,
    );
    expect(both.kept).toContain('[object Object]');
    expect(both.kept).toEqual(both.all.filter((n) => n !== 'should be falsy'));
  });

  it("tape (a helper that builds its assertions' names around the title it is handed): the title's file owns them, a protected file's titles stay guarded", async () => {
    const helper = `const test = require('tape');
module.exports = (title, a, b) => test(title, (t) => {
  t.equal(a === b, true, title + ' are equal');
  t.equal(b === a, true, 'strict: ' + title + ' are equal (reversed)');
  t.end();
});
`;
    const { all, kept } = await guarded(
      {
        'test/_tape.js': helper,
        'test/cmp.js': `const check = require('./_tape');\ncheck('equivalent Dates', 1, 1);\ncheck('two equal Maps', 2, 2);\n`,
        'test/guard.js': `const check = require('./_tape');\ncheck('guarded numbers', 3, 3);\n`,
      },
      { run: 'bash', args: ['-c', 'node test/cmp.js; node test/guard.js'] },
      { edited: ['test/cmp.js'], protectedPaths: ['test/guard.js'] },
      modules,
    );
    expect(all).toContain('strict: equivalent Dates are equal (reversed)');
    expect(kept).toEqual(['guarded numbers are equal', 'strict: guarded numbers are equal (reversed)']);
  });

  describe("when the titles a helper builds names around are single words (deep-equal's 'falses', 'trues')", () => {
    // deep-equal's test/_tape.js: the name is written end to end by the title and the helper's words.
    const helper = `const Test = require('tape/lib/test');
Test.prototype.deepEqualTest = function (a, b, msg) {
  this.equal(a === b, true, msg + ' are equal');
  this.equal(b === a, true, 'strict: ' + msg + ' are equal' + ' (reversed)');
};
`;
    const files = {
      'test/_tape.js': helper,
      'test/cmp.js': `const test = require('tape');\nrequire('./_tape');\ntest('booleans', (t) => { t.deepEqualTest(true, true, 'trues'); t.deepEqualTest(false, false, 'falses'); t.end(); });\n`,
      'test/guard.js': `const test = require('tape');\nrequire('./_tape');\ntest('guard', (t) => { t.deepEqualTest(1, 1, 'ones'); t.end(); });\n`,
    };
    const run = { run: 'bash', args: ['-c', 'node test/cmp.js; node test/guard.js'] };

    it("a change that edits the titles' file owns their tests, the helper's file left alone", async () => {
      const { all, kept } = await guarded(files, run, { edited: ['test/cmp.js'], protectedPaths: ['test/guard.js'] }, modules);
      expect(all).toContain('strict: falses are equal (reversed)');
      expect(kept).toEqual(['ones are equal', 'strict: ones are equal (reversed)']);
    });

    it('a change that edits the helper to skip one-word titles is still asked for the protected tests', async () => {
      const { all, kept } = await guarded(files, run, { edited: ['test/_tape.js'], protectedPaths: ['test/cmp.js', 'test/guard.js'] }, modules);
      expect(kept).toEqual(all);
      const skipping = all.filter((n) => !/\b(trues|falses|ones)\b/.test(n));
      expect(vanishedTests(kept, { passed: skipping, failed: [] }, false)).toEqual(all);
    });
  });

  it("tape (names built around the values a loop checks): the file whose literal ends the name owns it, a protected file's stay guarded", async () => {
    const { all, kept } = await guarded(
      {
        'test/prim.js': `const test = require('tape');
test('primitives', (t) => {
  for (const v of [NaN, 42, 'text']) t.ok(v === v || v !== v, 'toPrimitive(' + String(v) + ') returns the same value');
  t.end();
});
`,
        'test/guard.js': `const test = require('tape');
test('guard', (t) => {
  for (const v of [1, 2]) t.ok(true, 'guard(' + v + ') keeps its word');
  t.end();
});
`,
      },
      { run: 'bash', args: ['-c', 'node test/prim.js; node test/guard.js'] },
      { edited: ['test/prim.js'], protectedPaths: ['test/guard.js'] },
      modules,
    );
    expect(all).toContain('toPrimitive(NaN) returns the same value');
    expect(kept).toEqual(['guard(1) keeps its word', 'guard(2) keeps its word']);
  });

  const python = {
    'tests/__init__.py': '',
    'tests/test_calc.py': `import pytest
@pytest.mark.parametrize("a", [1, 2])
def test_presist(a):
    pass
class TestGroup:
    def test_in_class(self):
        pass
`,
    'tests/test_protected.py': 'def test_keeps():\n    pass\n',
  };

  it('pytest (node ids, or the dotted module in its JUnit) and unittest (its dotted class): the file is found from the module', async () => {
    const protectedPaths = ['tests/test_protected.py'];
    const verbose = await guarded(
      python,
      { run: '/usr/bin/python3', args: ['-m', 'pytest', '-p', 'no:cacheprovider', '-v', 'tests'] },
      { edited: ['tests/test_calc.py'], protectedPaths },
    );
    expect(verbose.all).toHaveLength(4);
    expect(verbose.kept).toEqual(['tests/test_protected.py > test_keeps']);
    const junit = await guarded(
      python,
      { run: 'bash', args: ['-c', '/usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml=junit.xml tests >/dev/null; cat junit.xml'] },
      { edited: ['tests/test_calc.py'], protectedPaths },
    );
    expect(junit.all).toContain('tests.test_calc.TestGroup > test_in_class');
    expect(junit.kept).toEqual(['tests.test_protected > test_keeps']);
    const unittest = await guarded(
      {
        'tests/__init__.py': '',
        'tests/test_unit.py': 'import unittest\nclass TestMath(unittest.TestCase):\n    def test_presist(self):\n        pass\n',
        'tests/test_guard.py': 'import unittest\nclass TestGuard(unittest.TestCase):\n    def test_keeps(self):\n        pass\n',
      },
      { run: '/usr/bin/python3', args: ['-m', 'unittest', '-v', 'tests.test_unit', 'tests.test_guard'] },
      { edited: ['tests/test_unit.py'], protectedPaths: ['tests/test_guard.py'] },
    );
    expect(unittest.all).toEqual(['tests.test_guard.TestGuard > test_keeps', 'tests.test_unit.TestMath > test_presist']);
    expect(unittest.kept).toEqual(['tests.test_guard.TestGuard > test_keeps']);
  });

  it('a test the change edits no file of is still guarded, whatever its runner names it by', async () => {
    const { all, kept } = await guarded(
      python,
      { run: '/usr/bin/python3', args: ['-m', 'pytest', '-p', 'no:cacheprovider', '-v', 'tests'] },
      { edited: ['src/calc.py'], protectedPaths: [] },
    );
    expect(kept).toEqual(all);
  });
});
