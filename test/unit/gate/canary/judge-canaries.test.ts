import { describe, expect, it } from 'vitest';
import { judgeCanaries } from '../../../../src/gate/canary/judge-canaries.js';
import { reportOf, type TestCase, type TestRun } from '../../../../src/gate/reports/cases.js';
import { parseOutput } from '../../../../src/gate/reports/read-report.js';

const NONCE = 'n0nce';
const c = (name: string, outcome: TestCase['outcome'], extra: Partial<TestCase> = {}): TestCase => ({ name, outcome, message: '', fileLevel: false, ...extra });
const run = (cases: TestCase[], summary: TestRun['summary'] = null): TestRun => ({ format: 'tap', cases, summary });
const canary = (role: string, proc = 'node-1') => `genesis-canary ${NONCE} ${proc} ${role}`;

describe('judgeCanaries', () => {
  it('takes the canaries out of the cases and of a summary, when they came out as they must', () => {
    const judged = judgeCanaries(
      run([c('a', 'passed'), c(canary('must-pass'), 'passed'), c(canary('must-fail'), 'skipped', { ranAs: 'failed' }), c('b', 'failed')], {
        passed: 2,
        failed: 1,
        skipped: 1,
      }),
      NONCE,
    );
    expect('run' in judged && judged.run.cases.map((x) => x.name)).toEqual(['a', 'b']);
    expect('run' in judged && reportOf(judged.run)).toMatchObject({ passed: 1, failed: 1, skipped: 0 });
  });

  it("accepts pytest's must-fail canary as a plain failure", () => {
    const judged = judgeCanaries(run([c(canary('must-pass', 'pytest-1'), 'passed'), c(canary('must-fail', 'pytest-1'), 'failed')]), NONCE);
    expect('run' in judged && judged.run.cases).toEqual([]);
  });

  it.each([
    ['a must-pass canary that failed', [c(canary('must-pass'), 'failed')], /must-pass canary test was reported failed/],
    ['a must-fail canary that passed', [c(canary('must-fail'), 'passed')], /must-fail canary test was reported passed/],
    ['a must-fail todo that passed', [c(canary('must-fail'), 'skipped', { ranAs: 'passed' })], /a todo that passed/],
    ['a must-fail canary skipped without running', [c(canary('must-fail'), 'skipped')], /reported skipped/],
    [
      'the after hook naming the nonce',
      [c('/work/.genesis-canary/node.cjs', 'failed', { fileLevel: true, message: `genesis-canary ${NONCE} tampered: x` })],
      /after the tests ran/,
    ],
  ])('says runner-tampered for %s', (_what, cases, message) => {
    const judged = judgeCanaries(run(cases), NONCE);
    expect('problem' in judged && judged.problem.reason).toBe('runner-tampered');
    expect('problem' in judged && judged.problem.message).toMatch(message);
  });

  it("holds vitest's must-fail canary, a test.fails, to a pass", () => {
    expect('run' in judgeCanaries(run([c(canary('must-pass', 'vitest-1'), 'passed'), c(canary('must-fail', 'vitest-1'), 'passed')]), NONCE)).toBe(true);
    const failed = judgeCanaries(run([c(canary('must-fail', 'vitest-1'), 'failed')]), NONCE);
    expect('problem' in failed && failed.problem.reason).toBe('runner-tampered');
  });

  it("leaves another gate's canaries, and a run without any, as they are", () => {
    const other = run([c('genesis-canary other node-1 must-pass', 'failed'), c('a', 'passed')]);
    expect(judgeCanaries(other, NONCE)).toEqual({ run: other });
  });

  it("reads a todo canary's outcome from node's TAP and spec output", () => {
    const tap = `TAP version 13\nok 1 - ${canary('must-pass')}\nnot ok 2 - ${canary('must-fail')} # TODO fails as it must\nok 3 - real\n1..3\n# tests 3\n# pass 2\n# fail 0\n# todo 1\n`;
    const judged = judgeCanaries(parseOutput(tap) as TestRun, NONCE);
    expect('run' in judged && reportOf(judged.run)).toMatchObject({ passed: 1, failed: 0, skipped: 0 });
    const forged = judgeCanaries(parseOutput(tap.replace('not ok 2', 'ok 2')) as TestRun, NONCE);
    expect('problem' in forged && forged.problem.reason).toBe('runner-tampered');
    const spec = `✔ ${canary('must-pass')} (1ms)\n✖ ${canary('must-fail')} # fails as it must\n✔ real (1ms)\nℹ tests 3\nℹ pass 2\nℹ fail 0\nℹ todo 1\n`;
    const fromSpec = judgeCanaries(parseOutput(spec) as TestRun, NONCE);
    expect('run' in fromSpec && reportOf(fromSpec.run)).toMatchObject({ passed: 1, failed: 0 });
  });
  it("reads node-tap's canaries, folded into each file's subtest, and their forged passes", () => {
    const points = (mustFail: string) =>
      `TAP version 13\n# Subtest: t/a.test.js\n    ok 1 - a is right\n    ok 2 - ${canary('must-pass', 'tap-1')}\n` +
      `    ${mustFail} 3 - ${canary('ok must-fail', 'tap-1')} # TODO fails as it must\n    1..3\n    # todo: 1\nok 1 - t/a.test.js # time=5ms\n\n1..1\n`;
    const honest = judgeCanaries(parseOutput(points('not ok')) as TestRun, NONCE);
    expect('run' in honest && reportOf(honest.run)).toMatchObject({ passed: 1, failed: 0, skipped: 0 });
    const forged = judgeCanaries(parseOutput(points('ok')) as TestRun, NONCE);
    expect('problem' in forged && forged.problem.reason).toBe('runner-tampered');
  });
  it("reads jest's verbose output, whose must-fail canary is a test.failing reported passing", () => {
    const out = (fail: string) =>
      `PASS t/b.test.js\n  ✓ ${canary('must-pass', 'jest-1')} (6 ms)\n  ${fail} ${canary('must-fail', 'jest-1')} (1 ms)\n  ✓ b is right\n\n` +
      'Test Suites: 1 passed, 1 total\nTests:       3 passed, 3 total\n';
    const honest = judgeCanaries(parseOutput(out('✓')) as TestRun, NONCE);
    expect('run' in honest && reportOf(honest.run)).toMatchObject({ format: 'jest', passed: 1, failed: 0, skipped: 0 });
    const forged = judgeCanaries(parseOutput(out('✕')) as TestRun, NONCE);
    expect('problem' in forged && forged.problem.message).toMatch(/must-fail canary test was reported failed/);
  });
});

describe("judgeCanaries, on vitest's default reporter (which names no passing test)", () => {
  // What vitest 4 printed for two files, each with the gate's two canaries beside its own tests.
  const printed = (pFile: string, pTests: string, passed: number) =>
    [
      ' ✓ spec/a.test.js (3 tests) 11ms',
      ` ✓ ${pFile} (${pTests}) 12ms`,
      '',
      ' Test Files  2 passed (2)',
      `      Tests  ${passed} passed | 2 expected fail${pTests.includes('skipped') ? ' | 1 skipped' : ''} (7)`,
    ].join('\n');

  it("takes each file's two canaries out of its count and of the summary", () => {
    const judged = judgeCanaries(parseOutput(printed('test/p.test.js', '4 tests', 5))!, NONCE);
    const names = 'run' in judged ? judged.run.cases.map((x) => x.name) : [];
    expect(names).toEqual(['spec/a.test.js > (passing test 1)', 'test/p.test.js > (passing test 1)', 'test/p.test.js > (passing test 2)']);
    expect('run' in judged && reportOf(judged.run)).toMatchObject({ passed: 3, failed: 0 });
  });

  it('so a protected file whose test the code skipped counts one passing test fewer', () => {
    const judged = judgeCanaries(parseOutput(printed('test/p.test.js', '4 tests | 1 skipped', 4))!, NONCE);
    expect('run' in judged && judged.run.cases.filter((x) => x.name.startsWith('test/p.test.js')).map((x) => x.name)).toEqual([
      'test/p.test.js > (passing test 1)',
    ]);
  });

  it('leaves the counts alone where no file ran the canaries (no expected failure: a pool without them)', () => {
    const output = [' ✓ spec/a.test.js (1 test) 1ms', '', ' Test Files  1 passed (1)', '      Tests  1 passed (1)'].join('\n');
    const judged = judgeCanaries(parseOutput(output)!, NONCE);
    expect('run' in judged && judged.run.cases.map((x) => x.name)).toEqual(['spec/a.test.js > (passing test 1)']);
  });
});
