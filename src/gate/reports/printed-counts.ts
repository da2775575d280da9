/**
 * Pass/fail counts read from what test runners print: node --test (tap and spec reporters),
 * generic TAP 13/14, JUnit XML, or a world's own regexes. Pure; a format that is not recognised
 * gives null, and the gate falls back to exit codes. The parsers live in test-report-tap.ts,
 * test-report-spec.ts and test-report-junit.ts; test-report-read.ts picks one for a gate step.
 */
import { createHash } from 'node:crypto';
import { reportOf } from './cases.js';
import { JUnitFormatError, parseJUnit } from './junit.js';
import { parseOutput } from './read-report.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

/** One failing test: its name (ancestors joined with ' > ') and the first lines of its error. */
export interface TestFailure {
  name: string;
  message: string;
}

/** Counts of leaf tests; todo tests count as skipped, cancelled (timed-out) ones as failed. */
export interface TestReport {
  format: 'tap' | 'junit' | 'node-test' | 'vitest' | 'jest' | 'mocha' | 'pytest' | 'unittest' | 'go' | 'cargo' | 'pattern';
  passed: number;
  failed: number;
  skipped: number;
  failures: TestFailure[];
}

/**
 * Reads node --test output (the tap reporter Node 20 uses off a TTY, and the spec reporter) or
 * generic TAP 13/14 (test points, plan, YAML diagnostics, nested subtests, Bail out!). Leaf tests
 * are counted; a file's own result (node's report for a file that ran no test) is not a pass.
 * @returns null when no format is recognised.
 */
export function parseTestOutput(output: string): TestReport | null {
  const run = parseOutput(output);
  return run ? reportOf(run) : null;
}

/**
 * Reads JUnit XML (see test-report-junit.ts): every `testcase` is one test; without any
 * testcase, the counts claimed on `testsuites` (or the sum over `testsuite`) are used.
 * @returns null when the text is not a JUnit XML document.
 */
export function parseJUnitXml(xml: string): TestReport | null {
  try {
    return reportOf(parseJUnit(xml));
  } catch (error) {
    if (error instanceof JUnitFormatError) return null;
    throw error;
  }
}

/** Null when `source` is a usable count regex (valid, with a capture group); else what is wrong. */
export function describeCountPatternProblem(source: string): string | null {
  try {
    // The added empty alternative always matches, and the match array has one slot per group.
    const groups = new RegExp(`${source}|`).exec('')?.length ?? 1;
    if (groups > 1) return null;
    return `pattern /${source}/ has no capture group; wrap the count in parentheses, e.g. "(\\d+) passing"`;
  } catch (error) {
    return `pattern /${source}/ is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * Counts from a world's own regexes (JavaScript syntax, multiline), whose first capture group is
 * the count; every match is added, so output of several runs sums up.
 * @returns null when a pattern is invalid or neither pattern matches.
 */
export function parseWithPattern(output: string, patterns: { passed?: string; failed?: string }): TestReport | null {
  const text = stripTerminalEscapes(output);
  const count = (source: string | undefined): number | null => {
    if (source === undefined || describeCountPatternProblem(source) !== null) return null;
    const matches = [...text.matchAll(new RegExp(source, 'gm'))];
    return matches.length === 0 ? null : matches.reduce((sum, m) => sum + (Number(m[1]) || 0), 0);
  };
  const passed = count(patterns.passed);
  const failed = count(patterns.failed);
  if (passed === null && failed === null) return null;
  return { format: 'pattern', passed: passed ?? 0, failed: failed ?? 0, skipped: 0, failures: [] };
}

/**
 * Sums reports (the test command's and each check's); the format is the first one's.
 * @returns null when every report is null.
 */
export function mergeReports(reports: readonly (TestReport | null)[]): TestReport | null {
  const present = reports.filter((r): r is TestReport => r !== null);
  const first = present[0];
  if (first === undefined) return null;
  return present.slice(1).reduce<TestReport>(
    (sum, r) => ({
      format: sum.format,
      passed: sum.passed + r.passed,
      failed: sum.failed + r.failed,
      skipped: sum.skipped + r.skipped,
      failures: [...sum.failures, ...r.failures],
    }),
    { ...first, failures: [...first.failures] },
  );
}

const HEX_ID = /^[0-9a-f]{7,}$/i;
const HEX_GROUP = /^[0-9a-f]{4,}$/i;
const HEX_NUMBER = /^0x[0-9a-f]+$/i;

/**
 * Ids in one run of word characters and dashes: `0x…` numbers, and hex strings of seven or more
 * with a digit, with their dash-joined groups of four or more (uuids). Read part by part: one
 * expression with a look-ahead over the dashes, tried at every word boundary, took the square
 * of a long `a-a-a-…` line.
 */
function blankIds(run: string): string {
  // Every id holds a digit: a run without one (most words) is left as it is, unsplit.
  if (!/\d/.test(run)) return run;
  const parts = run.split('-');
  // Whether a digit comes before the first character that is neither hex nor a dash, from each part on.
  const digitAhead: boolean[] = [];
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i] as string;
    const stop = part.search(/[^0-9a-f]/i);
    digitAhead[i] = stop === -1 ? /\d/.test(part) || (digitAhead[i + 1] ?? false) : /\d/.test(part.slice(0, stop));
  }
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (HEX_NUMBER.test(part)) {
      out.push('<id>');
      continue;
    }
    if (!(HEX_ID.test(part) && digitAhead[i])) {
      out.push(part);
      continue;
    }
    // The groups an id takes are passed over with it: each part is looked at once.
    let end = i + 1;
    while (end < parts.length && HEX_GROUP.test(parts[end] as string)) end++;
    out.push('<id>');
    i = end - 1;
  }
  return out.join('-');
}

/** Removes what differs between two runs of the same failure: colours, times, ids, paths, numbers. */
export function normalizeFailureText(text: string): string {
  return (
    stripTerminalEscapes(text)
      .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
      .replace(/\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b/g, '<time>')
      .replace(/\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds|m|min|minutes|h)\b/g, '<duration>')
      .replace(/[\w-]+/g, blankIds)
      // Workspaces and temp dirs differ per episode; the file's own name is the useful part.
      .replace(/(?<![\w.@~-])(file:\/\/)?(\/[^\s/'"`:()[\]]+)+\//g, '…/')
      .replace(/\d+/g, '<n>')
      .replace(/[ \t]+/g, ' ')
      .trim()
  );
}

const SIGNATURE_LINES = 20;

/**
 * A stable short signature of a failure, so the scheduler can tell whether two attempts failed
 * the same way: the reason plus the sorted failing test names when known, else the last lines
 * of the log (or the reason alone), normalized, hashed to 12 hex characters.
 */
export function failureSignature(reason: string, report: TestReport | null, logTail: string): string {
  if (report && report.failures.length > 0)
    return testsSignature(
      reason,
      report.failures.map((f) => f.name),
    );
  // A tail cut at a byte count may start mid-line; keeping only the last lines drops that one.
  const tail = logTail
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .slice(-SIGNATURE_LINES)
    .map(normalizeFailureText);
  return hashSignature(reason, ['log', ...tail]);
}

/**
 * The signature of a failure that names its tests (those that failed, or that vanished): two
 * attempts fail the same way only when the same tests are named, whatever their logs end with.
 */
export function testsSignature(reason: string, names: readonly string[]): string {
  return hashSignature(reason, ['tests', ...[...new Set(names.map(normalizeFailureText))].sort()]);
}

function hashSignature(reason: string, basis: readonly string[]): string {
  return createHash('sha256')
    .update([normalizeFailureText(reason), ...basis].join('\n'))
    .digest('hex')
    .slice(0, 12);
}
