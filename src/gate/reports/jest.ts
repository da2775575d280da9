/**
 * jest's own reporter as a gate step prints it (its default, and `--verbose`, which it also uses
 * for a run of one file). Pure.
 *
 * Each file is a `PASS`/`FAIL` line; failures follow as `● group › name` blocks, and verbose
 * output lists every test under its file, groups by indentation. Without verbose a passing test
 * is never named: such a file is kept as one counted name (`<file> > (passing test 1)`, vitest.ts's
 * COUNTED_NAME), so tests-vanished still holds a protected file to report a passing test. Counts
 * come from the closing `Tests:` line. Like every printed report, the code under test can print
 * into it; a world that must not be gamed names a JUnit file (jest-junit).
 */
import type { TestCase, TestOutcome, TestRun } from './cases.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

const FILE_LINE = /^(PASS|FAIL)\s+(\S+)(?:\s+\([^)]*\))?\s*$/;
// Read on lines with their trailing white space cut, and the duration taken off apart: a lazy name
// before optional white space backtracks as the square of a run of spaces a test printed.
const POINT = /^(\s+)([✓✕○✎])\s+(?:skipped |todo )?(.+)$/;
const DURATION = /\s\(\d+(?:\.\d+)?\s*m?s\)$/;
const GROUP = /^(\s+)([^\s●✓✕○✎].*)$/;
const FAILURE = /^\s+● (.+)$/;
const TESTS_LINE = /^Tests:\s+((?:\d+ [a-z]+,\s*)*\d+ total)\s*$/;
const SUITES_LINE = /^Test Suites:\s+(?:\d+ [a-z]+,\s*)*\d+ total\s*$/;
const SUITE_FAILED = 'Test suite failed to run';

const OUTCOME: Record<string, TestOutcome> = { '✓': 'passed', '✕': 'failed', '○': 'skipped', '✎': 'skipped' };

/** True when the output closes with jest's summary (`Test Suites:` then `Tests:`) after line `after`. */
export function endsWithJest(lines: readonly string[], after: number): boolean {
  const suites = lines.findLastIndex((l) => SUITES_LINE.test(l));
  return suites > after && lines.slice(suites + 1).some((l) => TESTS_LINE.test(l));
}

/** A run from jest's output, or null when it holds no jest summary. */
export function parseJest(output: string): TestRun | null {
  const lines = stripTerminalEscapes(output)
    .split(/\r?\n/)
    .map((l) => l.trimEnd());
  const summaryAt = lines.findLastIndex((l) => TESTS_LINE.test(l));
  if (summaryAt === -1 || !endsWithJest(lines, -1)) return null;
  const counts = new Map<string, number>();
  for (const m of ((TESTS_LINE.exec(lines[summaryAt]!) as RegExpExecArray)[1] as string).matchAll(/(\d+) ([a-z]+)/g)) counts.set(m[2] as string, Number(m[1]));
  const cases: TestCase[] = [];
  let file: string | null = null;
  let listing = false;
  let named = 0;
  const groups: Array<{ indent: number; name: string }> = [];
  const closeFile = (passed: boolean) => {
    if (file && passed && named === 0) cases.push({ name: `${file} > (passing test 1)`, outcome: 'passed', message: '', fileLevel: false });
  };
  let passedFile = false;
  // Failures a verbose listing named, by name: their messages come in the failure blocks below it.
  const listedFailures = new Map<string, TestCase>();
  for (let i = 0; i < summaryAt; i++) {
    const line = lines[i] as string;
    const header = FILE_LINE.exec(line);
    if (header) {
      closeFile(passedFile);
      file = header[2] as string;
      passedFile = header[1] === 'PASS';
      listing = true;
      named = 0;
      groups.length = 0;
      continue;
    }
    if (file === null) continue;
    const failure = FAILURE.exec(line);
    if (failure) {
      listing = false;
      let next = i + 1;
      while (next < lines.length && (lines[next] as string).trim() === '') next++;
      const message = lines[next]?.trim() ?? '';
      const suite = failure[1] === SUITE_FAILED;
      const name = suite ? file : `${file} > ${(failure[1] as string).split(' › ').join(' > ')}`;
      // A verbose listing already named this failure; its message is here.
      const listed = listedFailures.get(name);
      if (listed) listed.message = message;
      else {
        const failed: TestCase = { name, outcome: 'failed', message, fileLevel: suite };
        cases.push(failed);
        listedFailures.set(name, failed);
      }
      continue;
    }
    if (line.trim() === '') {
      listing = false;
      continue;
    }
    if (!listing) continue;
    const point = POINT.exec(line);
    if (point) {
      const indent = (point[1] as string).length;
      const above = groups.filter((g) => g.indent < indent).map((g) => g.name);
      const text = point[3] as string;
      const duration = DURATION.exec(text);
      const title = duration && duration.index > 0 ? text.slice(0, duration.index).trimEnd() : text;
      const listed: TestCase = {
        name: [file, ...above, title].join(' > '),
        outcome: OUTCOME[point[2] as string] as TestOutcome,
        message: '',
        fileLevel: false,
      };
      cases.push(listed);
      if (listed.outcome === 'failed' && !listedFailures.has(listed.name)) listedFailures.set(listed.name, listed);
      named++;
      continue;
    }
    const group = GROUP.exec(line);
    if (group) {
      const indent = (group[1] as string).length;
      while (groups.length > 0 && groups.at(-1)!.indent >= indent) groups.pop();
      groups.push({ indent, name: group[2] as string });
    }
  }
  closeFile(passedFile);
  const fileFailures = cases.filter((c) => c.fileLevel).length;
  return {
    format: 'jest',
    cases,
    summary: {
      passed: counts.get('passed') ?? 0,
      failed: (counts.get('failed') ?? 0) + fileFailures,
      skipped: (counts.get('skipped') ?? 0) + (counts.get('todo') ?? 0),
    },
  };
}
