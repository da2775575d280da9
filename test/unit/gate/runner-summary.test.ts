import { describe, expect, it } from 'vitest';
import { runnerSummaries, summaryMismatch } from '../../../src/gate/reports/runner-summary.js';

describe('runnerSummaries', () => {
  it('reads the closing line of pytest (framed and -q), jest, vitest and node', () => {
    const output = [
      '==================== 1 failed, 2 passed, 1 xfailed in 3.35s ====================',
      '1 failed, 1 passed, 1 error in 0.02s',
      'no tests ran in 0.01s',
      'Tests:       1 failed, 1 skipped, 2 passed, 4 total',
      ' \u001b[2m     Tests \u001b[22m \u001b[1m\u001b[31m1 failed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m\u001b[1m\u001b[32m3 passed\u001b[39m\u001b[22m\u001b[90m (4)\u001b[39m',
      '# tests 3',
      '# pass 2',
      '# fail 1',
      '# cancelled 1',
      '# skipped 0',
      'ℹ pass 5',
      'ℹ fail 0',
    ].join('\n');
    expect(runnerSummaries(output)).toEqual([
      { runner: 'pytest', passed: 2, failed: 1 },
      { runner: 'pytest', passed: 1, failed: 2 },
      { runner: 'pytest', passed: 0, failed: 0 },
      { runner: 'jest', passed: 2, failed: 1 },
      { runner: 'vitest', passed: 3, failed: 1 },
      { runner: 'node', passed: 2, failed: 2 },
      { runner: 'node', passed: 5, failed: 0 },
    ]);
  });

  it('takes no line of a test for a summary', () => {
    expect(runnerSummaries('ok 1 - 3 passed in 2s because\nall 3 passed, yes\nTests: 3 passed')).toEqual([]);
  });
});

describe('summaryMismatch', () => {
  it('names a report that says more passed than pytest printed', () => {
    const output = 'test_x.py F\n========= 1 failed in 0.10s =========\n';
    expect(summaryMismatch(output, { passed: 1, failed: 0 })).toMatch(/report file says 1 passed, 0 failed, and pytest itself printed 0 passed, 1 failed/);
  });

  it('agrees with the last run, or the sum of every run of the command', () => {
    const twice = '== 2 passed in 0.1s ==\n== 1 failed, 3 passed in 0.1s ==\n';
    expect(summaryMismatch(twice, { passed: 3, failed: 1 })).toBeNull();
    expect(summaryMismatch(twice, { passed: 5, failed: 1 })).toBeNull();
    expect(summaryMismatch(twice, { passed: 4, failed: 1 })).not.toBeNull();
  });

  it('has nothing to say when the output holds no summary', () => {
    expect(summaryMismatch('built\n', { passed: 9, failed: 0 })).toBeNull();
  });
});

describe('summaryMismatch after the runner', () => {
  it('is not taken back by a summary printed after the runner own line', () => {
    const output = '========= 1 failed in 0.10s =========\n========= 1 passed in 0.10s =========\n';
    expect(summaryMismatch(output, { passed: 1, failed: 0 })).toMatch(/pytest itself printed 0 passed, 1 failed/);
  });
});

describe('vitest summary with expected failures', () => {
  it('counts a test.fails that failed as it must among the passed, as vitest JUnit does', () => {
    expect(runnerSummaries('      Tests  1 failed | 2 passed | 1 expected fail (4)')).toEqual([{ runner: 'vitest', passed: 3, failed: 1 }]);
  });
});

describe('summaryMismatch with two runners', () => {
  it('holds the report to the runner it agrees with, not to another one the command ran', () => {
    const output = '======== 2 passed in 0.10s ========\n# tests 3\n# pass 1\n# fail 2\n';
    expect(summaryMismatch(output, { passed: 2, failed: 0 })).toBeNull();
    expect(summaryMismatch(output, { passed: 5, failed: 0 })).toMatch(/itself printed/);
  });
});
