import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { passingNames, reportOf, testsThatRan, type TestRun } from '../../../src/gate/reports/cases.js';
import { findJUnitInOutput, JUnitFormatError, parseJUnit } from '../../../src/gate/reports/junit.js';
import { parseOutput, readStepReport } from '../../../src/gate/reports/read-report.js';

/** Fixtures written by the real tools (see test/fixtures/test-reports/README.md). */
const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/test-reports/${name}`, import.meta.url), 'utf8');
const counts = (run: TestRun | null) => {
  const report = run ? reportOf(run) : null;
  return report ? { passed: report.passed, failed: report.failed, skipped: report.skipped } : null;
};

describe('JUnit written by real runners', () => {
  it('pytest --junitxml: errors and failures fail, parametrized cases are tests of their own, classes name them', () => {
    const run = parseJUnit(fixture('pytest-junitxml.xml'));
    expect(counts(run)).toEqual({ passed: 3, failed: 4, skipped: 1 });
    expect(run.cases.map((c) => c.name)).toContain('tests.test_calc > test_add_cases[2-2-5]');
    expect(run.cases.map((c) => c.name)).toContain('tests.test_calc.TestGroup > test_in_class');
    const markup = run.cases.find((c) => c.name.endsWith('test_message_with_markup'));
    expect(markup?.message).toContain(`'<a & b>' == ']]> done'`);
    expect(run.cases.find((c) => c.name.endsWith('test_fixture_error'))).toMatchObject({
      outcome: 'failed',
      message: expect.stringMatching(/^failed on setup with "FileNotFoundError/),
    });
  });

  it('node --test --test-reporter=junit: suites name nested tests, and a file that ran no test is a file-level result', () => {
    const run = parseJUnit(fixture('node-junit-reporter.xml'));
    expect(counts(run)).toEqual({ passed: 3, failed: 2, skipped: 2 });
    expect(passingNames(run)).toEqual(['adds two numbers', 'calculator > multiplies', 'calculator > nested > powers']);
    expect(run.cases.filter((c) => c.fileLevel)).toEqual([expect.objectContaining({ name: '/tmp/fixgen/nodejunit/empty.test.mjs', outcome: 'passed' })]);
  });

  it('jest-junit: counts the cases, not the attributes that leave a todo out', () => {
    const run = parseJUnit(fixture('jest-junit.xml'));
    expect(counts(run)).toEqual({ passed: 4, failed: 1, skipped: 1 });
    expect(reportOf(run).failures).toEqual([{ name: 'calculator divides by zero', message: 'Error: expect(received).toBe(expected) // Object.is equality' }]);
  });

  it('gotestsum: subtests and their parent are cases, a skip is skipped', () => {
    const run = parseJUnit(fixture('gotestsum-junit.xml'));
    expect(counts(run)).toEqual({ passed: 3, failed: 2, skipped: 1 });
    expect(reportOf(run).failures.map((f) => f.name)).toEqual(['example.com/calc > TestSub/negative_<&>', 'example.com/calc > TestSub']);
  });

  it('Maven Surefire (a testsuite root) and cargo nextest, written from their documented formats', () => {
    expect(counts(parseJUnit(fixture('surefire-junit.xml')))).toEqual({ passed: 2, failed: 2, skipped: 1 });
    expect(reportOf(parseJUnit(fixture('surefire-junit.xml'))).failures.map((f) => f.name)).toEqual([
      'com.example.CalcTest > divides',
      'com.example.CalcTest > dividesByZero',
    ]);
    expect(counts(parseJUnit(fixture('nextest-junit.xml')))).toEqual({ passed: 2, failed: 1, skipped: 0 });
  });

  it('refuses a document that is not well-formed, or whose root is not JUnit', () => {
    expect(() => parseJUnit('<testsuites><testcase name="a"></testsuites>')).toThrow(JUnitFormatError);
    expect(() => parseJUnit('<html><body/></html>')).toThrow(/root element is <html>/);
    expect(() => parseJUnit('')).toThrow(JUnitFormatError);
  });

  it('shows no test that ran for a report with attributes and no testcase', () => {
    expect(testsThatRan(parseJUnit('<testsuite name="a" tests="1000" failures="0"></testsuite>'))).toBe(0);
  });
});

describe('TAP 14 from node-tap', () => {
  it('reads nested subtests, skip and todo directives, escaped # and a failure with only a diff', () => {
    const run = parseOutput(fixture('node-tap-tap14.txt'));
    expect(counts(run)).toEqual({ passed: 4, failed: 1, skipped: 2 });
    expect(run?.cases.map((c) => c.name)).toEqual([
      'parser > reads numbers',
      'parser > reads hex',
      'parser > nested > reads octal',
      'parser > nested > reads binary',
      'formatter > formats objects',
      'formatter > formats dates',
      'top-level assertion # with a hash',
    ]);
    expect(reportOf(run!).failures).toEqual([{ name: 'parser > reads hex', message: '--- expected +++ actual @@ -1,1 +1,1 @@ -255 +NaN' }]);
  });
});

describe('scores that a test cannot forge by printing', () => {
  it('node TAP: the summaries, TAP and XML a test prints are comments, and a file that ran no test is no pass', () => {
    const run = parseOutput(fixture('node-forged-tap.txt'));
    expect(run?.format).toBe('node-test');
    expect(counts(run)).toEqual({ passed: 2, failed: 0, skipped: 0 });
    expect(findJUnitInOutput(fixture('node-forged-tap.txt'))).toBeNull();
  });

  it('node spec: only the final summary counts, and the raw TAP and XML a test printed are not read as a report', () => {
    const output = fixture('node-forged-spec.txt');
    const run = parseOutput(output);
    expect(run?.format).toBe('node-test');
    expect(counts(run)).toEqual({ passed: 2, failed: 0, skipped: 0 });
    expect(findJUnitInOutput(output)).toBeNull();
  });

  it('node junit: what a test prints is not in the report', () => {
    const run = findJUnitInOutput(fixture('node-forged-junit.xml'));
    expect(counts(run)).toEqual({ passed: 2, failed: 0, skipped: 0 });
  });

  it("node TAP: test points written into the runner's own output, past its escaping, make the report invalid", async () => {
    expect(parseOutput(fixture('node-injected-tap.txt'))?.tampered).toMatch(/shows 2 passing tests and the runner's summary 1/);
    const read = await readStepReport({ output: fixture('node-injected-tap.txt'), truncated: false, workDir: '/nonexistent', junit: null, required: true });
    expect(read).toMatchObject({ problem: { reason: 'report-invalid' } });
    expect(parseOutput(fixture('node-tap.txt'))?.tampered).toBeUndefined();
  });

  it('a summary line a test prints before the runner ends a cut-off stream does not count', () => {
    const cut = 'ok 7 - real\n# pass 1001\n# tests 9\n# pass 4\n# fail 5\n';
    expect(counts(parseOutput(cut))).toEqual({ passed: 4, failed: 5, skipped: 0 });
  });

  it('a JUnit document a test printed in the middle of the output is not a report; one that closes the output is', () => {
    const xml = '<testsuites><testsuite name="s"><testcase name="fake"/></testsuite></testsuites>';
    expect(findJUnitInOutput(`${xml}\nreal output after it\n`)).toBeNull();
    expect(findJUnitInOutput(`noise\n<?xml version="1.0"?>\n${xml}\n`)?.cases).toHaveLength(1);
  });
});

describe('testsThatRan', () => {
  it('is 0 when the only results are files that ran no test', () => {
    const exit0 =
      'TAP version 13\n# Subtest: /work/test/a.test.js\nok 1 - /work/test/a.test.js\n  ---\n  duration_ms: 60.1\n  ...\n1..1\n# tests 1\n# suites 0\n# pass 1\n# fail 0\n';
    const run = parseOutput(exit0);
    expect(counts(run)).toEqual({ passed: 0, failed: 0, skipped: 0 });
    expect(testsThatRan(run!)).toBe(0);
  });

  it('leaves a suite its runner declared empty (TAP 1..0) apart from a silent one', () => {
    expect(parseOutput('TAP version 13\n1..0\n')?.declaredEmpty).toBe(true);
    expect(parseOutput('TAP version 13\nok 1 - a # SKIP\n1..1\n')?.declaredEmpty).toBeUndefined();
  });

  it('is 0 when every test was skipped, and counts failures as tests that ran', () => {
    expect(testsThatRan(parseOutput('TAP version 14\nok 1 - a # SKIP\n1..1\n')!)).toBe(0);
    expect(testsThatRan(parseOutput('TAP version 14\nnot ok 1 - a\n1..1\n')!)).toBe(1);
  });
});

describe("vitest's own reporters", () => {
  const fixture = (name: string) => readFileSync(new URL(`../../fixtures/test-reports/${name}`, import.meta.url), 'utf8');

  it('reads the default reporter: counts from its summary, failures by name, passing tests counted per file', () => {
    const run = parseOutput(fixture('vitest-default.txt'))!;
    expect(reportOf(run)).toMatchObject({ format: 'vitest', passed: 4, failed: 2, skipped: 2 });
    expect(reportOf(run).failures.map((f) => f.name)).toEqual(['test/c.test.js', 'test/a.test.js > grp > bad']);
    expect(passingNames(run)).toEqual([
      'test/a.test.js > (passing test 1)',
      'test/a.test.js > (passing test 2)',
      'test/b.test.js > (passing test 1)',
      'test/d.test.js > (passing test 1)',
    ]);
    // The file that failed to load is a failure of the file, not a test that ran.
    expect(testsThatRan(run)).toBe(5);
  });

  it('reads the verbose reporter: every test by its file and full name', () => {
    const run = parseOutput(fixture('vitest-verbose.txt'))!;
    expect(reportOf(run)).toMatchObject({ format: 'vitest', passed: 4, failed: 2, skipped: 2 });
    expect(passingNames(run)).toEqual(['test/a.test.js > grp > inner', 'test/a.test.js > one', 'test/b.test.js > b1', 'test/d.test.js > d > e > deep']);
  });
});

describe("jest's own reporter", () => {
  const fixture = (name: string) => readFileSync(new URL(`../../fixtures/test-reports/${name}`, import.meta.url), 'utf8');
  const failures = ['test/a.test.js > grp > bad', 'test/c.test.js'];

  it('reads the default output: counts from its summary, failures by file and name, a passing file as one counted test', () => {
    const run = parseOutput(fixture('jest-default.txt'))!;
    expect(reportOf(run)).toMatchObject({ format: 'jest', passed: 3, failed: 2, skipped: 1 });
    expect(reportOf(run).failures.map((f) => f.name)).toEqual(failures);
    expect(reportOf(run).failures[0]!.message).toBe('expect(received).toBe(expected) // Object.is equality');
    expect(passingNames(run)).toEqual(['test/b.test.js > (passing test 1)']);
  });

  it('reads --verbose: every test by its file, groups and name', () => {
    const run = parseOutput(fixture('jest-verbose.txt'))!;
    expect(reportOf(run)).toMatchObject({ format: 'jest', passed: 3, failed: 2, skipped: 1 });
    expect(reportOf(run).failures.map((f) => f.name)).toEqual(failures);
    expect(passingNames(run)).toEqual(['test/a.test.js > grp > inner', 'test/a.test.js > one', 'test/b.test.js > b1']);
  });
});
