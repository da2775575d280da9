/**
 * Python's unittest runner (`python -m unittest`, with or without `-v`). Pure.
 *
 * It closes with `Ran N tests in 0.001s`, a blank line and `OK` or `FAILED (failures=1, errors=1,
 * skipped=1)`; each failure or error is a block headed `FAIL: test_bad (tests.test_unit.TestMath.test_bad)`
 * whose traceback ends with the exception's line, the message. Under `-v` every test has a line
 * `test_ok (tests.test_unit.TestMath.test_ok) ... ok`. A test is named as pytest's JUnit names it,
 * its class's dotted path then its method (`tests.test_unit.TestMath > test_bad`), so its module
 * leads its name. Counts come only from the closing lines.
 */
import type { TestCase, TestOutcome, TestRun } from '../cases.js';
import { printedLines } from './printed-lines.js';

const RAN = /^Ran (\d+) tests? in [0-9.]+s$/;
const RESULT = /^(OK|FAILED)(?: \(([a-z =0-9,]*)\))?$/;
const HEADER = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/;
const RESULTS = new Map<string, TestOutcome>([
  ['ok', 'passed'],
  ['FAIL', 'failed'],
  ['ERROR', 'failed'],
  ['unexpected success', 'failed'],
  ['expected failure', 'skipped'],
]);
const SEPARATOR = /^(?:=+|-+)$/;

/** `test_bad` in `tests.test_unit.TestMath.test_bad` (Python 3.11 on) or `tests.test_unit.TestMath` (before). */
function nameOf(method: string, dotted: string): string {
  const owner = dotted.endsWith(`.${method}`) ? dotted.slice(0, -method.length - 1) : dotted;
  return `${owner} > ${method}`;
}

/** `test_ok (tests.x.T.test_ok) ... ok` and the other outcomes `-v` prints, read by words. */
function pointOf(line: string): { name: string; outcome: TestOutcome } | null {
  const dots = line.indexOf(' ... ');
  if (dots === -1) return null;
  const head = /^(\w+) \(([\w.]+)\)/.exec(line.slice(0, dots));
  if (!head) return null;
  const result = line.slice(dots + 5);
  const outcome = RESULTS.get(result) ?? (result.startsWith('skipped ') ? 'skipped' : null);
  return outcome === null ? null : { name: nameOf(head[1] as string, head[2] as string), outcome };
}

/** Where the closing `Ran N tests` line is, when a result line follows it; -1 otherwise. */
function closingAt(lines: readonly string[]): number {
  const ran = lines.findLastIndex((l) => RAN.test(l));
  if (ran === -1) return -1;
  const result = lines.slice(ran + 1).find((l) => l.trim() !== '');
  return result !== undefined && RESULT.test(result) ? ran : -1;
}

/** Where unittest's closing `Ran N tests` line is (a result line after it), or -1. */
export function unittestClosesAt(lines: readonly string[]): number {
  return closingAt(lines);
}

/** A run from unittest's output, or null when it holds no closing `Ran N tests` and result. */
export function parseUnittest(output: string): TestRun | null {
  const lines = printedLines(output);
  const ran = closingAt(lines);
  if (ran === -1) return null;
  const total = Number(RAN.exec(lines[ran] as string)?.[1]);
  const result = RESULT.exec(lines.slice(ran + 1).find((l) => l.trim() !== '') ?? '') as RegExpExecArray;
  const counts = new Map<string, number>();
  for (const part of (result[2] ?? '').split(',')) {
    const [key, value] = part.trim().split('=');
    if (key && value) counts.set(key, Number(value));
  }
  const of = (key: string) => counts.get(key) ?? 0;
  const failed = of('failures') + of('errors') + of('unexpected successes');
  const skipped = of('skipped') + of('expected failures');
  const byName = new Map<string, TestCase>();
  for (const line of lines.slice(0, ran)) {
    const point = pointOf(line);
    if (point) byName.set(point.name, { ...point, message: '', fileLevel: false });
  }
  for (let i = 0; i < ran; i += 1) {
    const header = HEADER.exec(lines[i] as string);
    if (!header) continue;
    // The traceback runs to the next separator or blank-line-then-separator; its last line holds the message.
    let end = i + 2;
    while (end < ran && !SEPARATOR.test(lines[end] as string)) end += 1;
    const message = lines
      .slice(i + 2, end)
      .findLast((l) => l.trim() !== '' && !l.startsWith(' '))
      ?.trim();
    const name = nameOf(header[2] as string, header[3] as string);
    byName.set(name, { name, outcome: 'failed', message: message ?? '', fileLevel: false });
    i = end - 1;
  }
  return { format: 'unittest', cases: [...byName.values()], summary: { passed: Math.max(0, total - failed - skipped), failed, skipped } };
}
