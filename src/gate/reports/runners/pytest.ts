/**
 * pytest's own output, without a JUnit file: its closing summary (`3 failed, 3 passed, 1 skipped
 * in 0.02s`, framed by `=` unless `-q`), the short test summary (`FAILED path::test - message`,
 * pytest's default `-rfE`; `-rA` adds `PASSED path::test`) and, under `-v`, one line per test
 * (`path::Class::test PASSED [ 14%]`). Pure.
 *
 * A test is named by its node id with `::` read as ` > ` (`tests/test_calc.py > TestGroup >
 * test_raises`), so its file leads its name. Counts come only from the closing summary; without
 * `-v` or `-rA` only failing tests are named, as with jest's default reporter.
 */
import type { TestCase, TestOutcome, TestRun } from '../cases.js';
import { countList, countOf, printedLines } from './printed-lines.js';

/** The closing line: its count list and duration, with or without the `=` frame. */
const SUMMARY = /^=* ?([0-9][0-9a-z, ]*|no tests ran) in [0-9.]+s(?: \([0-9:]+\))? ?=*$/;
const PERCENT = / +\[ *\d+%\]$/;

const OUTCOME = new Map<string, TestOutcome>([
  ['PASSED', 'passed'],
  ['XPASS', 'passed'],
  ['FAILED', 'failed'],
  ['ERROR', 'failed'],
  ['SKIPPED', 'skipped'],
  ['XFAIL', 'skipped'],
]);

/** A node id's `::` parts joined with ` > `; a parameter id in brackets is kept whole. */
export function pytestName(nodeId: string): string {
  const bracket = nodeId.indexOf('[');
  const path = bracket === -1 ? nodeId : nodeId.slice(0, bracket);
  return path.split('::').join(' > ') + (bracket === -1 ? '' : nodeId.slice(bracket));
}

/** The closing summary's counts, or null when the line is not pytest's. */
function summaryOf(line: string): TestRun['summary'] {
  const match = SUMMARY.exec(line.trim());
  if (!match) return null;
  if (match[1] === 'no tests ran') return { passed: 0, failed: 0, skipped: 0 };
  const parts = countList(match[1] as string, ',');
  if (!parts) return null;
  return { passed: countOf(parts, 'passed', 'xpassed'), failed: countOf(parts, 'failed', 'error', 'errors'), skipped: countOf(parts, 'skipped', 'xfailed') };
}

/** Where pytest's closing summary is when it is the last line that holds text, or -1. */
export function pytestClosesAt(lines: readonly string[]): number {
  const last = lines.findLastIndex((l) => l.trim() !== '');
  return last !== -1 && summaryOf(lines[last] as string) !== null ? last : -1;
}

/**
 * One test's line: `-v`'s `id STATUS [ 14%]` or the short summary's `STATUS id - message`, read
 * by words, not by a pattern over the whole line (a test's id may be long). An id may hold spaces
 * (a parameter's, the gate's canaries'): in the summary it runs to the ` - ` before the message,
 * under `-v` to the status that ends the line.
 */
function pointOf(line: string): { id: string; status: string; message: string } | null {
  const words = line.replace(PERCENT, '').trimEnd().split(' ');
  const [first = '', second = ''] = words;
  if (OUTCOME.has(first) && second.includes('::')) {
    const dash = words.indexOf('-', 2);
    const end = dash === -1 ? words.length : dash;
    return { id: words.slice(1, end).join(' '), status: first, message: dash === -1 ? '' : words.slice(dash + 1).join(' ') };
  }
  if (first.includes('::') && OUTCOME.has(second)) return { id: first, status: second, message: '' };
  const last = words.length - 1;
  if (first.includes('::') && last > 1 && OUTCOME.has(words[last] as string))
    return { id: words.slice(0, last).join(' '), status: words[last] as string, message: '' };
  return null;
}

/** A run from pytest's output, or null when the output does not close with its summary. */
export function parsePytest(output: string): TestRun | null {
  const lines = printedLines(output);
  const last = lines.findLastIndex((l) => l.trim() !== '');
  const summary = last === -1 ? null : summaryOf(lines[last] as string);
  if (!summary) return null;
  const byName = new Map<string, TestCase>();
  for (const line of lines.slice(0, last)) {
    const point = pointOf(line);
    if (!point) continue;
    const { id, status, message } = point;
    const name = pytestName(id);
    const known = byName.get(name);
    const outcome = OUTCOME.get(status) as TestOutcome;
    // A test whose setup or teardown errs is reported twice (its PASSED call, then ERROR): the failure stands.
    if (known && known.outcome === 'failed' && outcome !== 'failed') continue;
    byName.set(name, { name, outcome, message: (message || known?.message || '').trim(), fileLevel: false });
  }
  return { format: 'pytest', cases: [...byName.values()], summary };
}
