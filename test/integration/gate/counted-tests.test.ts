import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countedTests } from '../../../src/gate/counted-tests.js';
import type { TestCase } from '../../../src/gate/reports/cases.js';
import { ratchetScore } from '../../../src/gate/step.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function repoWith(files: Record<string, string>): Promise<{ repo: string; head: string }> {
  const repo = await tempDir('genesis-counted-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo })
      .toString()
      .trim();
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'init');
  return { repo, head: git('rev-parse', 'HEAD') };
}

describe('countedTests', () => {
  it('counts the names the first commit reported and the tests protected files define, never a name the code registers', async () => {
    const { repo, head } = await repoWith({
      'test/m.test.js': "import test from 'node:test';\ndescribe('m', () => { it(\"is right\", () => {}); });\ntest('m loads', () => {});\n",
      'tests/test_p.py': 'def test_p():\n    assert True\n',
      'src/m.js': "import test from 'node:test';\ntest('inflated', () => {});\n",
    });
    const counts = await countedTests(repo, head, ['the world is sane'], ['test/**', 'tests/**']);
    expect(counts).not.toBeNull();
    const counted = (name: string) => counts!(name);
    expect(['the world is sane', 'm > is right', 'm loads', 'tests.test_p > test_p', 'test_p[1]', 'test/m.test.js > m loads'].map(counted)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['inflated', 'inflated 0', 'src/m.js > inflated', 'something else'].map(counted)).toEqual([false, false, false, false]);
  });

  it('does not count a test named after a protected file that does not define it: what vitest, jest and pytest name a test the code registers while that file loads', async () => {
    const { repo, head } = await repoWith({
      'vt/m.test.js': "import { test } from 'vitest';\ntest('m is right', () => {});\n",
      'tests/test_p.py': 'def test_p():\n    assert True\n',
    });
    const counts = (await countedTests(repo, head, [], ['vt/**', 'tests/**']))!;
    expect(['vt/m.test.js > m is right', 'tests.test_p > test_p'].map(counts)).toEqual([true, true]);
    expect(
      [
        'vt/m.test.js > inflated 0',
        'vt/m.test.js > suite > inflated 1',
        'tests.test_p > test_inflated_0',
        'vt/m.test.js',
        'src/x.js > m is right',
        'pkg.test_x > test_p',
      ].map(counts),
    ).toEqual([false, false, false, false, false, false]);
  });

  it('scores a name reported failing as well as passing as a failure: a passing test registered under the name of a failing one raises nothing', () => {
    const test = (name: string, outcome: TestCase['outcome']): TestCase => ({ name, outcome, message: '', fileLevel: false });
    const run = { format: 'node-test' as const, summary: null, cases: [test('m is right', 'failed'), test('m is right', 'passed'), test('base', 'passed')] };
    const report = { format: 'node-test' as const, passed: 2, failed: 1, skipped: 0, failures: [] };
    expect(ratchetScore(run, report, { minScore: 0, counts: () => true })).toBe(1);
  });

  it("scores by name beside a runner's summary too, which counts the tests the code registered; a run that names no passing test keeps its runner's count", () => {
    const pass = (name: string): TestCase => ({ name, outcome: 'passed', message: '', fileLevel: false });
    // vitest's default reporter: one numbered name per passing test of a file, and its Tests line.
    const names = [1, 2, 3, 4, 5, 6].map((n) => pass(`vt/m.test.js > (passing test ${n})`));
    const run = { format: 'vitest' as const, summary: { passed: 6, failed: 0, skipped: 0 }, cases: names };
    const report = { format: 'vitest' as const, passed: 6, failed: 0, skipped: 0, failures: [] };
    const scored = new Set(['vt/m.test.js > (passing test 1)']);
    expect(ratchetScore(run, report, { minScore: 0, counts: (n) => scored.has(n) })).toBe(1);
    const unnamed = { format: 'jest' as const, summary: { passed: 6, failed: 0, skipped: 0 }, cases: [] };
    expect(ratchetScore(unnamed, { ...report, format: 'jest' }, { minScore: 0, counts: (n) => scored.has(n) })).toBe(6);
  });

  it('counts every test when the scored names are not known on this machine', async () => {
    const { repo, head } = await repoWith({ 'a.txt': 'x' });
    expect(await countedTests(repo, head, null, ['test/**'])).toBeNull();
  });
});
