import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeCountPatternProblem,
  failureSignature,
  mergeReports,
  normalizeFailureText,
  parseJUnitXml,
  parseTestOutput,
  parseWithPattern,
} from '../../../src/gate/reports/printed-counts.js';
import type { TestReport } from '../../../src/gate/reports/printed-counts.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/test-reports/${name}`, import.meta.url), 'utf8');

const report = (overrides: Partial<TestReport> = {}): TestReport => ({
  format: 'tap',
  passed: 1,
  failed: 1,
  skipped: 0,
  failures: [{ name: 'adds', message: 'boom' }],
  ...overrides,
});

describe('parseTestOutput', () => {
  describe('when node --test prints TAP (its reporter when not on a terminal)', () => {
    it('counts leaf tests as the summary does, with todo as skipped', () => {
      expect(parseTestOutput(fixture('node-tap.txt'))).toMatchObject({ format: 'node-test', passed: 3, failed: 2, skipped: 2 });
    });

    it('names failing leaf tests with their suites and reads the error from the YAML block', () => {
      expect(parseTestOutput(fixture('node-tap.txt'))?.failures).toEqual([
        { name: 'subtracts two numbers', message: 'Expected values to be strictly equal: 2 !== 1' },
        { name: 'calculator > divides by zero', message: 'division by zero at /tmp/work-1234/src/div.js:10:5' },
      ]);
    });

    it('counts a timed-out (cancelled) test as failed, a file that fails to load as a failure, and a failing todo as neither', () => {
      const parsed = parseTestOutput(fixture('node-multi-file-tap.txt'));
      expect(parsed).toMatchObject({ passed: 1, failed: 2, skipped: 1 });
      expect(parsed?.failures.map((f) => f.name)).toEqual(['a times out', '/tmp/ntfix/multi/b.test.mjs']);
    });

    it('prefers the summary lines over the test points it saw', () => {
      const truncated = 'TAP version 13\nok 1 - a\n# tests 9\n# pass 4\n# fail 5\n';
      expect(parseTestOutput(truncated)).toMatchObject({ passed: 4, failed: 5 });
    });

    it('adds up the summaries of several runs in one log', () => {
      const twice = `${fixture('node-tap.txt')}\n${fixture('node-tap.txt')}`;
      expect(parseTestOutput(twice)).toMatchObject({ passed: 6, failed: 4, skipped: 4 });
    });
  });

  describe('when node --test prints its spec reporter', () => {
    it('reads the same counts and failures as from TAP', () => {
      const parsed = parseTestOutput(fixture('node-spec.txt'));
      expect(parsed).toMatchObject({ format: 'node-test', passed: 3, failed: 2, skipped: 2 });
      expect(parsed?.failures).toEqual([
        { name: 'subtracts two numbers', message: 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 2 !== 1' },
        { name: 'calculator > divides by zero', message: 'Error: division by zero at /tmp/work-1234/src/div.js:10:5' },
      ]);
    });

    it('does not count the failures the reporter repeats after its summary', () => {
      const parsed = parseTestOutput(fixture('node-multi-file-spec.txt'));
      expect(parsed).toMatchObject({ passed: 1, failed: 2, skipped: 1 });
      expect(parsed?.failures.map((f) => f.name)).toEqual(['a times out', '/tmp/ntfix/multi/b.test.mjs']);
    });

    it('reads coloured output', () => {
      const coloured = fixture('node-spec.txt').replaceAll('✖', '\u001b[31m✖\u001b[39m').replaceAll('ℹ', '\u001b[34mℹ\u001b[39m');
      expect(parseTestOutput(coloured)).toMatchObject({ passed: 3, failed: 2, skipped: 2 });
    });

    it('ignores tick marks from other tools when there is no Node summary', () => {
      expect(parseTestOutput('✔ compiled\n✖ lint found 2 problems\n')).toBeNull();
    });
  });

  describe('when a tool prints generic TAP', () => {
    it('reads prove-style output: skip and todo directives, and # diagnostics as the message', () => {
      expect(parseTestOutput(fixture('tap-prove.txt'))).toEqual({
        format: 'tap',
        passed: 2,
        failed: 1,
        skipped: 2,
        failures: [{ name: 'subtract works', message: "Failed test 'subtract works' at t/calc.t line 8. got: '1' expected: '2'" }],
      });
    });

    it('counts only leaves of TAP 14 subtests and reads the YAML message', () => {
      expect(parseTestOutput(fixture('tap14-subtests.txt'))).toEqual({
        format: 'tap',
        passed: 2,
        failed: 1,
        skipped: 1,
        failures: [{ name: 'parser > reads hex', message: 'expected 255, got NaN' }],
      });
    });

    it('reads CRLF line endings', () => {
      expect(parseTestOutput(fixture('tap-prove.txt').replaceAll('\n', '\r\n'))).toMatchObject({ passed: 2, failed: 1 });
    });

    it('counts tests the plan promised but never ran as one failure', () => {
      const parsed = parseTestOutput('1..4\nok 1 - a\nok 2 - b\n');
      expect(parsed).toMatchObject({ passed: 2, failed: 1 });
      expect(parsed?.failures).toEqual([{ name: '(plan)', message: 'planned 4 tests, 2 ran' }]);
    });

    it('counts a bail out as a failure', () => {
      const parsed = parseTestOutput('TAP version 13\nok 1 - a\nBail out! database is down\n');
      expect(parsed?.failures).toEqual([{ name: 'Bail out!', message: 'database is down' }]);
    });

    it('unescapes "#" in names and keeps it apart from directives', () => {
      const parsed = parseTestOutput('TAP version 13\nnot ok 1 - issue \\#12 # TODO later\nnot ok 2 - issue \\#13\n');
      expect(parsed).toMatchObject({ failed: 1, skipped: 1, failures: [{ name: 'issue #13' }] });
    });
  });

  it('returns null for output that holds no recognised format', () => {
    expect(parseTestOutput('')).toBeNull();
    expect(parseTestOutput('compiling...\nok\ndone in 3s\n')).toBeNull();
    expect(parseTestOutput(fixture('node-sample-source.txt'))).toBeNull();
    expect(parseTestOutput(' Tests  1 failed | 2 passed (3)\n')).toBeNull();
  });
});

describe('parseJUnitXml', () => {
  it('reads jest-junit output, taking the first line of the failure text as the message', () => {
    expect(parseJUnitXml(fixture('junit-jest.xml'))).toEqual({
      format: 'junit',
      passed: 2,
      failed: 1,
      skipped: 1,
      failures: [{ name: 'calculator divides by zero', message: 'Error: expect(received).toBe(expected) // Object.is equality' }],
    });
  });

  it('reads pytest output: errors fail, entities decode, and markup in CDATA or comments is not read', () => {
    const parsed = parseJUnitXml(fixture('junit-pytest.xml'));
    expect(parsed).toMatchObject({ passed: 2, failed: 2, skipped: 1 });
    expect(parsed?.failures.map((f) => f.name)).toEqual(['tests.test_calc > test_div', 'tests.test_io > test_fixture']);
    expect(parsed?.failures[1]?.message).toMatch(/^failed on setup with "FileNotFoundError/);
  });

  it('falls back to the counts on testsuite elements when there are no testcases', () => {
    const xml = '<testsuite name="a" tests="5" failures="1" errors="1" skipped="1"></testsuite>';
    expect(parseJUnitXml(xml)).toEqual({ format: 'junit', passed: 2, failed: 2, skipped: 1, failures: [] });
  });

  it('returns null for text that is not JUnit XML', () => {
    expect(parseJUnitXml('<html><body>nope</body></html>')).toBeNull();
    expect(parseJUnitXml('')).toBeNull();
  });
});

describe('parseWithPattern', () => {
  it('reads counts from a capture group and adds up every match', () => {
    const output = '  12 passing (30ms)\n  3 failing\n\n  4 passing\n';
    expect(parseWithPattern(output, { passed: '(\\d+) passing', failed: '(\\d+) failing' })).toEqual({
      format: 'pattern',
      passed: 16,
      failed: 3,
      skipped: 0,
      failures: [],
    });
  });

  it('returns null when no pattern matches or a pattern is invalid', () => {
    expect(parseWithPattern('nothing here', { passed: '(\\d+) passing' })).toBeNull();
    expect(parseWithPattern('3 passing', { passed: '(\\d+ passing' })).toBeNull();
  });

  it('explains a pattern without a capture group or with bad syntax', () => {
    expect(describeCountPatternProblem('(\\d+) passing')).toBeNull();
    expect(describeCountPatternProblem('\\d+ passing')).toMatch(/has no capture group; wrap the count in parentheses/);
    expect(describeCountPatternProblem('(\\d+ passing')).toMatch(/is not a valid regular expression/);
  });
});

describe('mergeReports', () => {
  it('adds counts and failures, skipping missing reports, without changing its inputs', () => {
    const a = report();
    const merged = mergeReports([a, null, report({ format: 'junit', passed: 2, failures: [{ name: 'subs', message: 'x' }] })]);
    expect(merged).toEqual({
      format: 'tap',
      passed: 3,
      failed: 2,
      skipped: 0,
      failures: [
        { name: 'adds', message: 'boom' },
        { name: 'subs', message: 'x' },
      ],
    });
    expect(a.failures).toHaveLength(1);
  });

  it('returns null when there is no report at all', () => {
    expect(mergeReports([])).toBeNull();
    expect(mergeReports([null, null])).toBeNull();
  });
});

describe('failureSignature', () => {
  it('is 12 hex characters', () => {
    expect(failureSignature('tests-failed', report(), '')).toMatch(/^[0-9a-f]{12}$/);
  });

  it('depends on the set of failing tests, not their order or messages', () => {
    const one = report({
      failures: [
        { name: 'a', message: 'took 12ms' },
        { name: 'b', message: 'x' },
      ],
    });
    const two = report({
      failures: [
        { name: 'b', message: 'y' },
        { name: 'a', message: 'took 9ms' },
      ],
    });
    expect(failureSignature('tests-failed', one, 'log one')).toBe(failureSignature('tests-failed', two, 'log two'));
    expect(failureSignature('tests-failed', one, '')).not.toBe(failureSignature('tests-failed', report(), ''));
  });

  it('is the same for the TAP and spec output of one run', () => {
    expect(failureSignature('tests-failed', parseTestOutput(fixture('node-tap.txt')), '')).toBe(
      failureSignature('tests-failed', parseTestOutput(fixture('node-spec.txt')), ''),
    );
  });

  it('uses the log when no failing test is named, ignoring times, ids, temp paths and durations', () => {
    const first = 'build started 2024-05-01T10:00:00.123Z\nError: ENOENT /tmp/ws-8f3a2b91/src/add.js (took 1.2s) pid 4242 id 3fa9c0d1e2';
    const second = 'build started 2024-06-02 11:30:59\nError: ENOENT /var/tmp/episode-77/src/add.js (took 350ms) pid 17 id 0b7e55aa01';
    expect(failureSignature('build-failed', null, first)).toBe(failureSignature('build-failed', null, second));
    expect(failureSignature('build-failed', null, first)).not.toBe(failureSignature('build-failed', null, 'Error: EACCES /tmp/x/src/add.js'));
    expect(failureSignature('build-failed', report({ failures: [] }), first)).toBe(failureSignature('build-failed', null, second));
  });

  it('separates failures with different reasons', () => {
    expect(failureSignature('timeout', null, 'same')).not.toBe(failureSignature('build-failed', null, 'same'));
  });

  it('keeps only the last lines of a long log, so a tail cut mid-line does not change it', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i % 3 === 0 ? 'alpha' : 'beta'} ${'x'.repeat(i)}`).join('\n');
    expect(failureSignature('r', null, `garbage-prefix ${lines}`)).toBe(failureSignature('r', null, `other ${lines}`));
  });
});

describe('normalizeFailureText', () => {
  it('keeps the file name of an absolute path and the words of the message', () => {
    expect(normalizeFailureText('at /tmp/work-1234/src/div.js:10:5')).toBe('at …/div.js:<n>:<n>');
    expect(normalizeFailureText('see src/lib/a.js')).toBe('see src/lib/a.js');
  });
});
