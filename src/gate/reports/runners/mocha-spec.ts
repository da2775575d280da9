/**
 * mocha's default `spec` reporter. Pure.
 *
 * The tree names each test under its suites by indentation (`✔ title`, `N) title` for a failure,
 * `- title` for a pending one); mocha's own full title is the suites' and the test's titles joined
 * with spaces, as its TAP and JSON reporters name it, so a world reads the same names whichever of
 * the three it prints. Counts come only from the closing `N passing`, `N pending`, `N failing`
 * lines; each failure's message is the first line under its numbered entry after them. What a test
 * prints sits in the same output, so names are as trustworthy as the output: a world that must
 * not be gamed names a JUnit file.
 */
import type { TestCase, TestRun } from '../cases.js';
import { printedLines } from './printed-lines.js';

const PASSING = /^ {2}(\d+) passing \(\d+(?:ms|s|m)\)$/;
const PENDING = /^ {2}(\d+) pending$/;
const FAILING = /^ {2}(\d+) failing$/;
const PASSED_POINT = /^( +)[✔✓] (.+)$/;
const FAILED_POINT = /^( +)(\d+)\) (.+)$/;
const PENDING_POINT = /^( +)- (.+)$/;
const SPEED = / \(\d+ms\)$/;

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** Where mocha's closing `N passing` line is, or -1. */
export function mochaSpecClosesAt(lines: readonly string[]): number {
  return lines.findLastIndex((l) => PASSING.test(l));
}

/** The closing block's counts, from its `passing` line on. */
function summaryAt(lines: readonly string[], start: number): { passed: number; skipped: number; failed: number; end: number } {
  const passed = Number(PASSING.exec(lines[start] as string)?.[1]);
  let at = start + 1;
  const pending = PENDING.exec(lines[at] ?? '');
  if (pending) at += 1;
  const failing = FAILING.exec(lines[at] ?? '');
  return { passed, skipped: pending ? Number(pending[1]) : 0, failed: failing ? Number(failing[1]) : 0, end: failing ? at + 1 : at };
}

/** The first message line under each numbered failure after the summary: the line after its title, which ends with `:`. */
function failureMessages(lines: readonly string[], from: number): Map<number, string> {
  const messages = new Map<number, string>();
  for (let i = from; i < lines.length; i += 1) {
    const entry = /^ {2}(\d+)\) /.exec(lines[i] as string);
    if (!entry) continue;
    let j = i;
    // The title runs over one line per suite; its last line ends with a colon.
    while (j < lines.length && !(lines[j] as string).endsWith(':') && j - i < 20) j += 1;
    const message = lines.slice(j + 1, j + 40).find((l) => l.trim() !== '');
    messages.set(Number(entry[1]), (message ?? '').trim());
    i = j;
  }
  return messages;
}

/** A run from mocha's spec output, or null when it holds no mocha summary. */
export function parseMochaSpec(output: string): TestRun | null {
  const lines = printedLines(output);
  const start = lines.findLastIndex((l) => PASSING.test(l));
  if (start === -1) return null;
  const summary = summaryAt(lines, start);
  const messages = failureMessages(lines, summary.end);
  const suites: Array<{ indent: number; title: string }> = [];
  const cases: TestCase[] = [];
  const nameOf = (indent: number, title: string) => [...suites.filter((s) => s.indent < indent).map((s) => s.title), title].join(' ');
  for (const line of lines.slice(0, start)) {
    const indent = indentOf(line);
    const passed = PASSED_POINT.exec(line);
    const failed = passed ? null : FAILED_POINT.exec(line);
    const pending = passed || failed ? null : PENDING_POINT.exec(line);
    // A suite's title is indented; what a test prints mostly starts at the margin, and a summary it prints is no suite.
    const suite = !passed && !failed && !pending && indent >= 2 && !PASSING.test(line) && !PENDING.test(line) && !FAILING.test(line);
    if (!passed && !failed && !pending && !suite) continue;
    // Deeper suites close when a test or suite comes at their depth or above.
    while (suites.length > 0 && (suites.at(-1) as { indent: number }).indent >= indent) suites.pop();
    if (passed) cases.push({ name: nameOf(indent, (passed[2] as string).replace(SPEED, '')), outcome: 'passed', message: '', fileLevel: false });
    else if (failed)
      cases.push({ name: nameOf(indent, failed[3] as string), outcome: 'failed', message: messages.get(Number(failed[2])) ?? '', fileLevel: false });
    else if (pending) cases.push({ name: nameOf(indent, pending[2] as string), outcome: 'skipped', message: '', fileLevel: false });
    else suites.push({ indent, title: line.trim() });
  }
  return { format: 'mocha', cases, summary: { passed: summary.passed, failed: summary.failed, skipped: summary.skipped } };
}
