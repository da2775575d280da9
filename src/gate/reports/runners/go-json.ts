/**
 * `go test -json`: one JSON event a line (`{"Action":"fail","Package":"example.com/calc",
 * "Test":"TestSub/negative","Elapsed":0}`), each test's `pass`, `fail` or `skip` closing it, its
 * `output` events before, and a package's own `pass` or `fail` (no `Test`) closing the package. Pure.
 *
 * A test is named `<package> > <test>` as gotestsum's JUnit names it (a subtest keeps its `/`
 * path), its message is the first line it printed that is not the runner's own (`=== RUN`,
 * `--- FAIL`), and a package that fails with no test of its own failing (it did not build) is a
 * failed file-level result. Counts come from the events, which the runner alone writes as JSON;
 * a test printing such a line writes it inside an `output` event's text.
 */
import type { TestCase, TestOutcome, TestRun } from '../cases.js';
import { printedLines } from './printed-lines.js';

interface GoEvent {
  Action?: unknown;
  Package?: unknown;
  Test?: unknown;
  Output?: unknown;
}

const OUTCOME = new Map<unknown, TestOutcome>([
  ['pass', 'passed'],
  ['fail', 'failed'],
  ['skip', 'skipped'],
]);
const RUNNER_LINE = /^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:FAIL|PASS|SKIP)|FAIL|PASS|ok\s)/;

function eventOf(line: string): GoEvent | null {
  if (!line.startsWith('{"')) return null;
  try {
    const parsed = JSON.parse(line) as unknown;
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as GoEvent).Action === 'string' ? (parsed as GoEvent) : null;
  } catch {
    return null;
  }
}

/** Where the last package's closing event is, or -1. */
export function goJsonClosesAt(lines: readonly string[]): number {
  return lines.findLastIndex((line) => {
    const event = eventOf(line);
    return event !== null && event.Test === undefined && (event.Action === 'pass' || event.Action === 'fail');
  });
}

/** A run from `go test -json`, or null when the output holds no package's closing event. */
export function parseGoJson(output: string): TestRun | null {
  const lines = printedLines(output);
  if (goJsonClosesAt(lines) === -1) return null;
  const cases: TestCase[] = [];
  const messages = new Map<string, string>();
  const failedIn = new Set<string>();
  for (const line of lines) {
    const event = eventOf(line);
    if (!event || typeof event.Package !== 'string') continue;
    const test = typeof event.Test === 'string' ? event.Test : null;
    const key = test === null ? event.Package : `${event.Package} > ${test}`;
    if (event.Action === 'output' && typeof event.Output === 'string') {
      const text = event.Output.trim();
      if (!messages.has(key) && text !== '' && !RUNNER_LINE.test(text)) messages.set(key, text);
      continue;
    }
    const outcome = OUTCOME.get(event.Action);
    if (outcome === undefined) continue;
    if (test !== null) {
      if (outcome === 'failed') failedIn.add(event.Package);
      cases.push({ name: key, outcome, message: outcome === 'failed' ? (messages.get(key) ?? '') : '', fileLevel: false });
    } else if (outcome === 'failed' && !failedIn.has(event.Package)) {
      cases.push({
        name: key,
        outcome,
        message: messages.get(key) ?? 'the package failed with no test failing (it did not build, or exited)',
        fileLevel: true,
      });
    }
  }
  return { format: 'go', cases, summary: null };
}
