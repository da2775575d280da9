/**
 * The individual results a test runner reported, whatever its format, and the counts drawn from
 * them. Pure. The parsers (test-report-tap, -spec, -junit) produce a {@link TestRun}; the gate
 * reads counts, names and the "did any test run at all" question from it.
 */
import type { TestReport } from './printed-counts.js';

export type TestOutcome = 'passed' | 'failed' | 'skipped';

/** One test as its runner reported it. */
export interface TestCase {
  /** Ancestors and name joined with ' > ' (the same for one test in TAP, spec and JUnit from node). */
  name: string;
  outcome: TestOutcome;
  /** First lines of the error, for failures. */
  message: string;
  /**
   * A result for a whole test file rather than a test in it: what node --test reports for a file
   * that registered no test (it exited, or failed to load). Such a pass proves nothing ran.
   */
  fileLevel: boolean;
  /**
   * For a skipped or todo test that ran all the same (TAP's `not ok … # TODO`, node's ✖ with a
   * reason): how its body came out. The gate's canaries read it; counts never do.
   */
  ranAs?: 'passed' | 'failed';
}

/** What one step's output or report files said. */
export interface TestRun {
  format: TestReport['format'];
  cases: TestCase[];
  /**
   * Counts from the runner's own closing summary, used instead of the cases when the output
   * did not hold every case (a tail cut from a long log). Never taken from any other line.
   */
  summary: { passed: number; failed: number; skipped: number } | null;
  /**
   * Set when the output contradicts itself: more passing test points than the runner's own
   * summary counts, which only lines written into the runner's output by something else make.
   */
  tampered?: string;
  /** vitest's count of test.fails tests that failed as declared (its summary's `expected fail`). */
  expectedFailures?: number;
  /** The runner said on purpose that it has no test to run (TAP's `1..0`): an empty suite, not a silent one. */
  declaredEmpty?: boolean;
}

const MESSAGE_LIMIT = 500;
export const clip = (text: string): string => (text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text);

// An absolute path to a script: node --test names a file's own result after the file.
const FILE_NAME = /^(?:\/|[A-Za-z]:[\\/])\S*\.(?:[cm]?[jt]sx?)$/;

/** True when a test's name is a test file's path: node's result for a file with no test in it. */
export function isFileLevelName(name: string): boolean {
  return FILE_NAME.test(name);
}

/**
 * Counts of a run: cases that are individual tests, plus failed file-level results (a file that
 * does not load is a failure); a file-level pass counts for nothing. With a runner summary
 * (partial output), its counts less the file-level passes seen.
 */
export function reportOf(run: TestRun): TestReport {
  const failures = run.cases.filter((c) => c.outcome === 'failed').map((c) => ({ name: c.name, message: clip(c.message) }));
  if (run.summary) {
    const filePasses = run.cases.filter((c) => c.fileLevel && c.outcome === 'passed').length;
    return { format: run.format, passed: Math.max(0, run.summary.passed - filePasses), failed: run.summary.failed, skipped: run.summary.skipped, failures };
  }
  const count = (outcome: TestOutcome) => run.cases.filter((c) => c.outcome === outcome && !(c.fileLevel && outcome === 'passed')).length;
  return { format: run.format, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), failures };
}

/** Individual tests that ran (passed or failed); file-level results and skipped tests are not. */
export function testsThatRan(run: TestRun): number {
  // A JUnit report's only counts without cases are its attributes: a claim that no case backs.
  if (run.format === 'junit') return run.cases.filter((c) => !c.fileLevel && c.outcome !== 'skipped').length;
  const report = reportOf(run);
  const fileFailures = run.cases.filter((c) => c.fileLevel && c.outcome === 'failed').length;
  return Math.max(0, report.passed + report.failed - fileFailures);
}

/** A date and time as JavaScript prints one: ISO (`2026-12-07T15:57:41.376Z`) or Date's own (`Mon Dec 07 2026 15:58:03 GMT+0000 (…)`). */
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})/g;
const DATE_TIME = /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^()]{0,80}\))?/g;

/**
 * tape 4's names for an assertion without a message, as tape 5 names the same assertion: a change
 * that moves the project to tape 5 renames every such assertion of every file, edited or not.
 */
const TAPE_4_NAMES: ReadonlyMap<string, string> = new Map([
  ['should be equal', 'should be strictly equal'],
  ['should not be equal', 'should not be strictly equal'],
  ['should be equivalent', 'should be deeply equivalent'],
  ['should not be equivalent', 'should not be deeply equivalent'],
]);

/**
 * A test's name as it is compared from one run to the next: what differs between two runs of the
 * same test (an object's address in a parameter id, a temporary directory, the time a title
 * printed, as es-to-primitive's `toPrimitive(new Date())` does) is blanked out, and tape 4's name
 * for a message-less assertion is read as tape 5's.
 */
export function stableTestName(name: string): string {
  const tape5 = TAPE_4_NAMES.get(name);
  if (tape5 !== undefined) return tape5;
  return name
    .replace(/\b0x[0-9a-f]{4,}\b/gi, '0x…')
    .replace(/(?:\/tmp|\/var\/tmp|\/private\/var\/folders)\/[^\s>\]'",)]+/g, '…')
    .replace(ISO_TIME, '(time)')
    .replace(DATE_TIME, '(time)');
}

/** Names of the individual tests reported with an outcome (a set: a name reported twice counts once). */
export function namesWith(run: TestRun, outcome: TestOutcome): string[] {
  return [...new Set(run.cases.filter((c) => !c.fileLevel && c.outcome === outcome).map((c) => stableTestName(c.name)))].sort();
}

/** Names of the individual tests reported passing (see {@link namesWith}). */
export function passingNames(run: TestRun): string[] {
  return namesWith(run, 'passed');
}

/**
 * Names of the tests reported passing, once for each test that bears one: what checks run
 * together keep, since two checks' files may each hold a test of the same name.
 */
export function passingNamesEach(run: TestRun): string[] {
  return run.cases
    .filter((c) => !c.fileLevel && c.outcome === 'passed')
    .map((c) => stableTestName(c.name))
    .sort();
}

/** One run from several (files of one report, documents of one log); null when there is none. */
export function mergeRuns(runs: readonly (TestRun | null)[]): TestRun | null {
  const present = runs.filter((r): r is TestRun => r !== null);
  const first = present[0];
  if (first === undefined) return null;
  const summaries = present.map((r) => r.summary ?? { passed: countOf(r, 'passed'), failed: countOf(r, 'failed'), skipped: countOf(r, 'skipped') });
  const anySummary = present.some((r) => r.summary !== null);
  const tampered = present.map((r) => r.tampered).find((t) => t !== undefined);
  const declaredEmpty = present.every((r) => r.declaredEmpty === true);
  return {
    ...(declaredEmpty ? { declaredEmpty } : {}),
    format: first.format,
    cases: present.flatMap((r) => r.cases),
    ...(tampered === undefined ? {} : { tampered }),
    summary: anySummary
      ? summaries.reduce((sum, s) => ({ passed: sum.passed + s.passed, failed: sum.failed + s.failed, skipped: sum.skipped + s.skipped }))
      : null,
  };
}

/** Raw count of cases with an outcome, file-level passes included (the summary's own convention). */
function countOf(run: TestRun, outcome: TestOutcome): number {
  return run.cases.filter((c) => c.outcome === outcome).length;
}
