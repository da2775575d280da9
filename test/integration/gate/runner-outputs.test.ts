/**
 * What each test runner people use prints, made here by the real runner at a pinned version (the
 * JavaScript ones from the npm registry, pytest and unittest from Debian's python3, cargo and go
 * when the machine has them), read as the gate reads a step's output: counts, the name of every
 * test, and each failure's first message line, which a rejection quotes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { namesWith, passingNames, reportOf, type TestRun } from '../../../src/gate/reports/cases.js';
import { parseOutput, readStepReport } from '../../../src/gate/reports/read-report.js';
import { describeFailures } from '../../../src/gate/step.js';
import { onlyTimedOut } from '../../../src/gate/timed-out-tests.js';
import { installTestRunners, runnerOutput, writeProject } from '../../helpers/test-runners.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const has = (command: string): boolean => {
  try {
    execFileSync('bash', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

let modules: string;
const project = async (files: Record<string, string>, nodeModules: string | null = modules): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'genesis-runner-'));
  await writeProject(dir, files, nodeModules);
  return dir;
};

beforeAll(async () => {
  modules = await installTestRunners();
}, 20 * 60_000);

const counts = (run: TestRun | null) => {
  const report = run ? reportOf(run) : null;
  return report && { passed: report.passed, failed: report.failed, skipped: report.skipped };
};
const failures = (run: TestRun | null) => (run ? reportOf(run).failures.map((f) => ({ name: f.name, first: f.message.split('\n')[0] })) : null);

describe('mocha 10.8.2', () => {
  const files = {
    'test/api.test.js': `const assert = require('assert');
describe('bodyParser()', function () {
  it('should parse JSON', function () {});
  it('should reject bad input', function () { assert.strictEqual(1, 2, 'expected the body to be parsed'); });
  describe('with limit', function () {
    it('should time out', function (done) { this.timeout(50); });
    it.skip('should wait', function () {});
    it('should pass nested', function () {});
  });
});
`,
  };
  const mocha = (dir: string, ...args: string[]) => runnerOutput(join(modules, '.bin', 'mocha'), args, dir);
  const expectedFailures = [
    { name: 'bodyParser() should reject bad input', first: expect.stringContaining('expected the body to be parsed') },
    { name: 'bodyParser() with limit should time out', first: expect.stringContaining('Timeout of 50ms exceeded') },
  ];

  it('spec, tap and json name every test alike (suite and test titles joined with spaces) and quote each failure', async () => {
    const dir = await project(files);
    const runs = await Promise.all([mocha(dir), mocha(dir, '--reporter', 'tap'), mocha(dir, '--reporter', 'json')]);
    for (const { output, exitCode } of runs) {
      expect(exitCode).toBe(2);
      const run = parseOutput(output);
      expect(passingNames(run as TestRun)).toEqual(['bodyParser() should parse JSON', 'bodyParser() with limit should pass nested']);
      expect(failures(run)).toEqual(expectedFailures);
      expect(counts(run)).toMatchObject({ passed: 2, failed: 2 });
      expect(describeFailures(reportOf(run as TestRun).failures)).toMatch(
        /^bodyParser\(\) should reject bad input \(.*expected the body to be parsed\); bodyParser\(\) with limit should time out \(.*Timeout of 50ms exceeded/,
      );
    }
    expect(counts(parseOutput(runs[0]?.output ?? ''))).toEqual({ passed: 2, failed: 2, skipped: 1 });
    expect(counts(parseOutput(runs[2]?.output ?? ''))).toEqual({ passed: 2, failed: 2, skipped: 1 });
  });

  it("a run whose only failure is mocha's own per-test timeout is read as one, in every reporter (the gate runs it again with more time)", async () => {
    const dir = await project({ 'test/slow.test.js': files['test/api.test.js'].replace(/\n {2}it\('should reject bad input'.*\n/, '\n') });
    for (const args of [[], ['--reporter', 'tap'], ['--reporter', 'json']]) {
      const run = parseOutput((await mocha(dir, ...args)).output);
      expect(failures(run)).toEqual([expectedFailures[1]]);
      expect(onlyTimedOut(run && reportOf(run))).toBe(true);
    }
  });

  it('what a test prints is neither a test nor a suite of the spec tree, and a summary it prints is not the count', async () => {
    const dir = await project({
      'test/noisy.test.js': `describe('outer', function () {
  it('logs', function () { console.log('  5 passing (1ms)'); console.log('✔ forged'); console.log('debug: 3'); });
});
`,
    });
    const run = parseOutput((await mocha(dir)).output);
    expect(passingNames(run as TestRun)).toEqual(['outer logs']);
    expect(counts(run)).toEqual({ passed: 1, failed: 0, skipped: 0 });
  });
});

describe('tape 5.9.0', () => {
  it('names each assertion, and a failure by its comparison', async () => {
    const dir = await project({
      'calc.test.js': `const test = require('tape');
test('adds', (t) => { t.equal(1 + 1, 2, 'one and one'); t.end(); });
test('fails', (t) => { t.equal(1 + 1, 3, 'sum is three'); t.end(); });
`,
    });
    const run = parseOutput((await runnerOutput('node', ['calc.test.js'], dir)).output);
    expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 0 });
    expect(failures(run)).toEqual([{ name: 'sum is three', first: 'equal: expected 3, actual 2' }]);
  });

  it("skips an assertion whose message holds a '#' (which tape writes unescaped), under its own name", async () => {
    const dir = await project({
      'calc.test.js': `const test = require('tape');
test('stringify', (t) => {
  t.equal(1, 1, 'array, bracket');
  t.equal(1, 2, 'array, comma (pending issue #378)', { skip: true });
  t.end();
});
`,
    });
    const { output } = await runnerOutput('node', ['calc.test.js'], dir);
    expect(output).toContain('array, comma (pending issue #378) # SKIP');
    const run = parseOutput(output);
    expect(counts(run)).toEqual({ passed: 1, failed: 0, skipped: 1 });
    expect(passingNames(run!)).toEqual(['array, bracket']);
    expect(run?.cases.find((c) => c.outcome === 'skipped')?.name).toBe('array, comma (pending issue #378)');
  });
});

describe('jest 29.6.3', () => {
  it('names tests by file, suite and title, and quotes the matcher', async () => {
    const dir = await project({
      'package.json': '{"name":"calc","version":"1.0.0"}',
      'calc.test.js': `describe('calculator', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('divides by zero', () => { expect(1 / 0).toBe(0); });
  test.skip('later', () => {});
});
`,
    });
    const run = parseOutput((await runnerOutput(join(modules, '.bin', 'jest'), ['--ci'], dir)).output);
    expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 1 });
    expect(failures(run)).toEqual([{ name: './calc.test.js > calculator > divides by zero', first: 'expect(received).toBe(expected) // Object.is equality' }]);
  });
});

describe('node-tap 21.8.0', () => {
  it('names subtests by their parents, and quotes the diff', async () => {
    const dir = await project({
      'calc.test.mjs': `import t from 'tap';
t.test('calculator', async (t) => {
  t.equal(1 + 1, 2, 'adds');
  t.equal(1 + 1, 3, 'sum is three');
});
t.test('later', { skip: 'not yet' }, async () => {});
`,
    });
    const run = parseOutput((await runnerOutput('node', ['calc.test.mjs'], dir)).output);
    expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 1 });
    expect(failures(run)).toEqual([{ name: 'calculator > sum is three', first: expect.stringContaining('-3 +2') }]);
  });
});

describe("vitest (this project's own) and node:test (this node)", () => {
  const source = (from: string) => `import { describe, it, expect } from '${from}';
describe('calculator', () => {
  it('adds', () => { expect(1 + 1).toBe(2); });
  it('divides', () => { expect(1 / 0).toBe(0); });
});
`;

  it('vitest --reporter=verbose names each test with its file and quotes the assertion', async () => {
    const dir = await project({ 'calc.test.ts': source('vitest'), 'vitest.config.ts': 'export default {};\n' }, join(REPO, 'node_modules'));
    const run = parseOutput((await runnerOutput(join(REPO, 'node_modules', '.bin', 'vitest'), ['run', '--reporter=verbose'], dir)).output);
    expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 0 });
    expect(failures(run)).toEqual([{ name: 'calc.test.ts > calculator > divides', first: expect.stringContaining('expected Infinity to be +0') }]);
  });

  it('vitest by default names a failure under its heading wherever the heading falls: its stderr may come after the summary in one stream', async () => {
    const dir = await project({ 'calc.test.ts': source('vitest'), 'vitest.config.ts': 'export default {};\n' }, join(REPO, 'node_modules'));
    const result = spawnSync(join(REPO, 'node_modules', '.bin', 'vitest'), ['run'], { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: '1' } });
    expect(result.stderr).toContain('FAIL');
    // The order a loaded machine gives a gate that reads both streams as one: stdout (the summary) first.
    for (const output of [result.stdout + result.stderr, result.stderr + result.stdout]) {
      const run = parseOutput(output);
      expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 0 });
      expect(failures(run)).toEqual([{ name: 'calc.test.ts > calculator > divides', first: expect.stringContaining('expected Infinity to be +0') }]);
    }
  });

  it('node --test names suite and test with " > ", in tap and spec alike', async () => {
    const dir = await project(
      {
        'calc.test.mjs': `import { describe, it } from 'node:test';
import assert from 'node:assert';
describe('calculator', () => {
  it('adds', () => assert.equal(1 + 1, 2));
  it('divides', () => assert.equal(1 / 0, 0, 'division by zero'));
});
`,
      },
      null,
    );
    for (const reporter of ['tap', 'spec']) {
      const run = parseOutput((await runnerOutput('node', ['--test', `--test-reporter=${reporter}`, 'calc.test.mjs'], dir)).output);
      expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 0 });
      expect(failures(run)).toEqual([{ name: 'calculator > divides', first: expect.stringContaining('division by zero') }]);
    }
  });
});

describe("pytest 7.2.1 and unittest (Debian's python3)", () => {
  const PYTHON = '/usr/bin/python3';
  const tests = {
    'tests/__init__.py': '',
    'tests/test_calc.py': `import pytest
def test_adds():
    assert 1 + 1 == 2
def test_fails():
    assert 1 + 1 == 3, "sum is wrong"
@pytest.mark.skip(reason="not yet")
def test_skipped():
    pass
@pytest.mark.parametrize("a,b", [(1, 1), (2, 3)])
def test_param(a, b):
    assert a == b
class TestGroup:
    def test_in_class(self):
        pass
    def test_raises(self):
        raise ValueError("bad value")
`,
  };
  const pytest = (dir: string, ...args: string[]) => runnerOutput(PYTHON, ['-m', 'pytest', '-p', 'no:cacheprovider', ...args, 'tests'], dir);
  const failing = [
    { name: 'tests/test_calc.py > test_fails', first: 'AssertionError: sum is wrong' },
    { name: 'tests/test_calc.py > test_param[2-3]', first: 'assert 2 == 3' },
    { name: 'tests/test_calc.py > TestGroup > test_raises', first: 'ValueError: bad value' },
  ];

  it('its own output, quiet, default or verbose: counts from its summary, failures by node id with their message', async () => {
    const dir = await project(tests, null);
    for (const args of [['-q'], [], ['-v'], ['-rA']]) {
      const { output, exitCode } = await pytest(dir, ...args);
      expect(exitCode).toBe(1);
      if (args.length === 0) expect(output).toContain('pytest-7.2.1');
      const run = parseOutput(output);
      expect(counts(run)).toEqual({ passed: 3, failed: 3, skipped: 1 });
      expect(failures(run)).toEqual(expect.arrayContaining(failing));
      expect(reportOf(run as TestRun).failures).toHaveLength(3);
      if (args[0] === '-v' || args[0] === '-rA')
        expect(passingNames(run as TestRun)).toEqual([
          'tests/test_calc.py > TestGroup > test_in_class',
          'tests/test_calc.py > test_adds',
          'tests/test_calc.py > test_param[1-1]',
        ]);
    }
  });

  it('names a failing test whose id holds spaces (a parameter’s, the gate’s canaries’) whole, with its message', async () => {
    const dir = await project(
      {
        'tests/test_spaced.py': `import pytest
@pytest.mark.parametrize("text", ["two words", "one"], ids=["two words", "one"])
def test_spaced(text):
    assert " " not in text, "has a space"
`,
      },
      null,
    );
    for (const args of [['-q'], ['-v'], ['-rA']]) {
      const { output, exitCode } = await pytest(dir, ...args);
      expect(exitCode).toBe(1);
      const run = parseOutput(output);
      expect(counts(run), args[0]).toEqual({ passed: 1, failed: 1, skipped: 0 });
      expect(failures(run), args[0]).toEqual([{ name: 'tests/test_spaced.py > test_spaced[two words]', first: 'AssertionError: has a space' }]);
      if (args[0] !== '-q') expect(passingNames(run as TestRun), args[0]).toEqual(['tests/test_spaced.py > test_spaced[one]']);
    }
  });

  it('with a JUnit file: the file is read, held against what pytest printed, and names each failure with its message', async () => {
    const dir = await project(tests, null);
    const { output } = await pytest(dir, '--junitxml=junit.xml');
    const read = await readStepReport({ output, truncated: false, workDir: dir, junit: ['junit.xml'], required: true });
    expect('run' in read && counts(read.run)).toEqual({ passed: 3, failed: 3, skipped: 1 });
    expect('run' in read && failures(read.run)?.map((f) => f.first)).toEqual([
      expect.stringMatching(/^AssertionError: sum is wrong/),
      'assert 2 == 3',
      'ValueError: bad value',
    ]);
  });

  it('unittest, plain and -v: counts from its closing lines, failures named as pytest names classes, with the exception line', async () => {
    const dir = await project(
      {
        'tests/__init__.py': '',
        'tests/test_unit.py': `import unittest
class TestMath(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(2, 2)
    def test_bad(self):
        self.assertEqual(2, 3, "two is not three")
    @unittest.skip("later")
    def test_skip(self):
        pass
    def test_error(self):
        raise KeyError("missing")
`,
      },
      null,
    );
    for (const verbose of [false, true]) {
      const { output, exitCode } = await runnerOutput(PYTHON, ['-m', 'unittest', ...(verbose ? ['-v'] : []), 'tests.test_unit'], dir);
      expect(exitCode).toBe(1);
      const run = parseOutput(output);
      expect(counts(run)).toEqual({ passed: 1, failed: 2, skipped: 1 });
      expect(failures(run)).toEqual(
        expect.arrayContaining([
          { name: 'tests.test_unit.TestMath > test_bad', first: 'AssertionError: 2 != 3 : two is not three' },
          { name: 'tests.test_unit.TestMath > test_error', first: "KeyError: 'missing'" },
        ]),
      );
      expect(passingNames(run as TestRun)).toEqual(verbose ? ['tests.test_unit.TestMath > test_ok'] : []);
    }
  });
});

describe.skipIf(!has('cargo'))('cargo test (this machine)', () => {
  it('adds up the result lines, names tests by module path, quotes the panic', async () => {
    const dir = await project(
      {
        'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
        'src/lib.rs': `pub fn add(a: u64, b: u64) -> u64 { a + b }
#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn it_adds() { assert_eq!(add(2, 2), 4); }
    #[test]
    fn it_fails() { assert_eq!(add(2, 2), 5, "two and two"); }
    #[test]
    #[ignore]
    fn it_is_ignored() {}
}
`,
      },
      null,
    );
    for (const quiet of [false, true]) {
      const { output, exitCode } = await runnerOutput('cargo', ['test', '--offline', ...(quiet ? ['-q'] : [])], dir, {
        CARGO_HOME: join(process.env.HOME ?? '', '.cargo'),
      });
      expect(exitCode).toBe(101);
      const run = parseOutput(output);
      expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 1 });
      expect(failures(run)).toEqual([{ name: 'tests > it_fails', first: 'assertion `left == right` failed: two and two' }]);
      expect(namesWith(run as TestRun, 'passed')).toEqual(quiet ? [] : ['tests > it_adds']);
    }
  }, 120_000);
});

describe.skipIf(!has('go'))('go test -json (this machine)', () => {
  it('names tests by package and test, quotes what the test logged', async () => {
    const dir = await project(
      {
        'go.mod': 'module example.com/calc\n\ngo 1.19\n',
        'calc_test.go': `package calc
import "testing"
func TestAdds(t *testing.T) { if 1+1 != 2 { t.Fatal("no") } }
func TestFails(t *testing.T) { t.Fatalf("expected %d, got %d", 3, 2) }
func TestSkips(t *testing.T) { t.Skip("later") }
`,
      },
      null,
    );
    const run = parseOutput((await runnerOutput('go', ['test', '-json', './...'], dir, { GOFLAGS: '-mod=mod', GOCACHE: join(dir, '.cache') })).output);
    expect(counts(run)).toEqual({ passed: 1, failed: 1, skipped: 1 });
    expect(failures(run)).toEqual([{ name: 'example.com/calc > TestFails', first: expect.stringContaining('expected 3, got 2') }]);
  }, 120_000);
});
