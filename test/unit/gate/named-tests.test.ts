import { describe, expect, it } from 'vitest';
import { allFailOn, commandForTests, failedTestNames, reportsAll, reportsAny, splitByRecord, withRerun } from '../../../src/gate/named-tests.js';
import type { TestCase, TestRun } from '../../../src/gate/reports/cases.js';

const test = (name: string, outcome: TestCase['outcome'], fileLevel = false): TestCase => ({ name, outcome, message: '', fileLevel });
const run = (cases: TestCase[], summary: TestRun['summary'] = null): TestRun => ({ format: 'tap', cases, summary });

describe('failedTestNames', () => {
  it('names the failed tests of a run', () => {
    expect(failedTestNames(run([test('a', 'passed'), test('s > b', 'failed'), test('s > b', 'failed')]))).toEqual(['s > b']);
  });

  it('names none when a whole file failed, when the summary counts more failures than were named, or when none failed', () => {
    expect(failedTestNames(run([test('/work/test/a.test.js', 'failed', true), test('b', 'failed')]))).toBeNull();
    expect(failedTestNames(run([test('b', 'failed')], { passed: 9, failed: 2, skipped: 0 }))).toBeNull();
    expect(failedTestNames(run([test('a', 'passed')]))).toBeNull();
    expect(failedTestNames(null)).toBeNull();
  });
});

describe('commandForTests', () => {
  it("adds node's name filter for every level of each name, and the canaries, to each node --test", () => {
    expect(commandForTests('sleep 1 && node --test test/', ['suite > it (works) [1]'])).toBe(
      "sleep 1 && node --test '--test-name-pattern=^genesis-canary ' '--test-name-pattern=^suite$' '--test-name-pattern=^it \\(works\\) \\[1\\]$' test/",
    );
  });

  it('quotes a name that holds a quote, so the shell cannot be made to run it', () => {
    const command = commandForTests('node --test', ["it's; rm -rf /"]);
    expect(command).toBe(`node --test '--test-name-pattern=^genesis-canary ' '--test-name-pattern=^it'\\''s; rm -rf \\/$'`);
  });

  it('leaves a command with no runner it knows as it is (null: run the whole step)', () => {
    expect(commandForTests('npm test', ['a'])).toBeNull();
    expect(commandForTests('node --testing', ['a'])).toBeNull();
    expect(commandForTests('node --test', [])).toBeNull();
  });
});

describe('judging by name', () => {
  it('keeps the first run but for the re-run tests, which come out as they did the second time', () => {
    const first = run([test('a', 'passed'), test('b', 'failed'), test('c', 'failed')], { passed: 1, failed: 2, skipped: 0 });
    const merged = withRerun(first, run([test('b', 'passed'), test('c', 'failed'), test('a', 'skipped')]), ['b', 'c']);
    expect(merged.cases.map((c) => [c.name, c.outcome])).toEqual([
      ['a', 'passed'],
      ['b', 'passed'],
      ['c', 'failed'],
    ]);
    expect(merged.summary).toEqual({ passed: 2, failed: 1, skipped: 0 });
  });

  it('tells whether a run reports every name asked for, skipped ones not counting', () => {
    expect(reportsAll(run([test('a', 'passed'), test('b', 'failed')]), ['a', 'b'])).toBe(true);
    expect(reportsAll(run([test('a', 'passed'), test('b', 'skipped')]), ['a', 'b'])).toBe(false);
    expect(reportsAny(run([test('a', 'skipped')]), ['a', 'b'])).toBe(true);
    expect(reportsAny(run([test('/work/test/a.test.js', 'failed', true)]), ['a'])).toBe(false);
  });

  it("condemns by the base's record and never excuses by it", () => {
    expect(splitByRecord(['a', 'b'], ['b', 'c'])).toEqual({ passedOnBase: ['b'], unknown: ['a'] });
    expect(splitByRecord(['a'], undefined)).toEqual({ passedOnBase: [], unknown: ['a'] });
    expect(allFailOn(run([test('a', 'failed'), test('b', 'passed')]), ['a', 'b'])).toBe(false);
    expect(allFailOn(run([test('a', 'failed')]), ['a', 'missing'])).toBe(false);
    expect(allFailOn(run([test('a', 'failed'), test('b', 'failed')]), ['a', 'b'])).toBe(true);
  });
});
