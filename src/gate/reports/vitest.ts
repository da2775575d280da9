/**
 * vitest's own reporters, as a gate step prints them: `default` (what `vitest run` prints with no
 * option) and `verbose`. Pure.
 *
 * The default reporter names a test only when it fails; a passing file is one line with its counts
 * (`✓ test/a.test.ts (5 tests | 1 skipped) 3ms`). Its passing tests are kept as one numbered name
 * per passing test of the file (`test/a.test.ts > (passing test 3)`, see COUNTED_NAME), so the rules
 * that compare names (tests-vanished) compare that file's count of passing tests instead. The
 * verbose reporter names every test with its file (`✓ test/a.test.ts > group > name 2ms`).
 * Counts come from the closing `Tests` line. Like every printed report, the code under test can
 * print lines of its own into it; a world that must not be gamed names a JUnit file.
 */
import type { TestCase, TestOutcome, TestRun } from './cases.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

const FILE_LINE = /^[✓❯×↓]\s+(\S+)\s+\((\d+) tests?((?:\s*\|\s*\d+ [a-z]+)*)\)(?:\s+[\d.]+m?s)?$/;
// Lines are trimmed, and a named test's duration is taken off apart: a lazy name before optional
// white space backtracks as the square of a run of spaces a test printed.
const NAMED_LINE = /^([✓×↓□])\s+(\S+ > .+)$/;
const DURATION = /\s[\d.]+m?s$/;
const FAIL_LINE = /^FAIL\s+(.+)$/;
const SUITE_FAIL = /^(\S+)\s+\[ .* \]$/;
// A label may be two words: a test.fails that failed as declared is `1 expected fail`.
const TESTS_LINE = /^Tests\s+((?:\d+ [a-z]+(?: [a-z]+)*(?:\s*\|\s*)?)+)\s*\((\d+)\)$/;
const FILES_LINE = /^Test Files\s+(?:\d+ [a-z]+(?:\s*\|\s*)?)+\s*\(\d+\)$/;

/** The names the default reporter's passing tests are kept under: `<file> > (passing test <n>)`. */
export const COUNTED_NAME = /^(.+) > \(passing test (\d+)\)$/;

const OUTCOME: Record<string, TestOutcome> = { '✓': 'passed', '×': 'failed', '↓': 'skipped', '□': 'skipped' };

function countsIn(list: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of list.matchAll(/(\d+) ([a-z]+)/g)) counts.set(m[2] as string, (counts.get(m[2] as string) ?? 0) + Number(m[1]));
  return counts;
}

/** A named test without the duration the verbose reporter puts after it; its name keeps at least `file > x`. */
function withoutDuration(text: string): string {
  const duration = DURATION.exec(text);
  if (!duration) return text;
  const name = text.slice(0, duration.index).trimEnd();
  return / > ./.test(name) ? name : text;
}

/** True when the output closes with vitest's summary (its `Test Files` and `Tests` lines) after `after`. */
export function endsWithVitest(lines: readonly string[], after: number): boolean {
  const files = lines.findLastIndex((l) => FILES_LINE.test(l.trim()));
  return files > after && lines.slice(files + 1).some((l) => TESTS_LINE.test(l.trim()));
}

/** A run from vitest's default or verbose output, or null when it holds no vitest summary. */
export function parseVitest(output: string): TestRun | null {
  const lines = stripTerminalEscapes(output)
    .split(/\r?\n/)
    .map((l) => l.trim());
  const summaryAt = lines.findLastIndex((l) => TESTS_LINE.test(l));
  if (summaryAt === -1 || !endsWithVitest(lines, -1)) return null;
  const counts = countsIn((TESTS_LINE.exec(lines[summaryAt]!) as RegExpExecArray)[1] as string);
  const named: TestCase[] = [];
  const counted: TestCase[] = [];
  const failed: TestCase[] = [];
  // The failures' headings go to stderr and the summary to stdout: in a gate's one stream, a loaded
  // machine may put the headings after the summary, so they are read to the end.
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const file = i < summaryAt ? FILE_LINE.exec(line) : null;
    if (file) {
      const parts = countsIn(file[3] ?? '');
      const passing = Number(file[2]) - (parts.get('failed') ?? 0) - (parts.get('skipped') ?? 0) - (parts.get('todo') ?? 0);
      for (let n = 1; n <= passing; n++) counted.push({ name: `${file[1]} > (passing test ${n})`, outcome: 'passed', message: '', fileLevel: false });
      continue;
    }
    const point = i < summaryAt ? NAMED_LINE.exec(line) : null;
    if (point) {
      named.push({ name: withoutDuration(point[2] as string), outcome: OUTCOME[point[1] as string] as TestOutcome, message: '', fileLevel: false });
      continue;
    }
    const fail = FAIL_LINE.exec(line);
    if (fail) {
      const suite = SUITE_FAIL.exec(fail[1] as string);
      const message = lines[i + 1] ?? '';
      // A file that failed to load is a failure of the file, not of a test in it.
      failed.push({ name: suite ? (suite[1] as string) : (fail[1] as string), outcome: 'failed', message, fileLevel: suite !== null });
    }
  }
  // The verbose reporter names every test; the default one names only failures.
  // A named failure's message is under its FAIL heading further down.
  const messages = new Map(failed.map((f) => [f.name, f.message]));
  const withMessages = named.map((c) => (c.outcome === 'failed' ? { ...c, message: messages.get(c.name) ?? '' } : c));
  const cases = named.length > 0 ? [...withMessages, ...failed.filter((f) => f.fileLevel)] : [...counted, ...failed];
  return {
    format: 'vitest',
    cases,
    // A file that failed to load is outside vitest's `Tests` count; as with node, it counts as a failure.
    // A test.fails that failed as it must is a pass, as in vitest's JUnit.
    ...(counts.has('expected') ? { expectedFailures: counts.get('expected') } : {}),
    summary: {
      passed: (counts.get('passed') ?? 0) + (counts.get('expected') ?? 0),
      failed: (counts.get('failed') ?? 0) + failed.filter((f) => f.fileLevel).length,
      skipped: (counts.get('skipped') ?? 0) + (counts.get('todo') ?? 0),
    },
  };
}
