/**
 * TAP 13/14 read with node-tap's own parser (tap-parser): node --test's default reporter off a
 * terminal, node-tap, prove, and anything else that speaks TAP. Pure.
 *
 * Counts come from the test points, leaves only (a subtest's closing point is not a test), never
 * from comment lines: node --test prints what a test writes to stdout as `# …` comments, so a
 * program that prints `# pass 1001` adds a comment, not a test. The runner's closing summary
 * (`# tests`, `# pass`, … after the plan) is used only for a stream whose beginning was cut off
 * (no `TAP version` header, or fewer points than its plan): then only the summary has every test.
 */
import { Parser } from 'tap-parser';
import { isFileLevelName, mergeRuns, type TestCase, type TestRun } from './cases.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

const HEADER = /^TAP version \d+\s*$/;
const SUMMARY = /^#\s+(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\s+([\d.]+)\s*$/;

interface Result {
  ok: boolean;
  name: string;
  fullname: string;
  skip: boolean | string;
  todo: boolean | string;
  diag: Record<string, unknown> | null;
}

type Event = { kind: 'result'; result: Result } | { kind: 'comment'; text: string } | { kind: 'extra'; text: string } | { kind: 'bailout'; reason: string };

/** True when the text holds TAP at all: a header, a plan or a numbered test point at column 0. */
function looksLikeTap(lines: readonly string[]): boolean {
  return lines.some((l) => HEADER.test(l) || /^1\.\.\d+/.test(l) || /^(not )?ok \d/.test(l));
}

/** The error text of a failing point: its YAML `message` or `error`, else a diff or comparison, else the comments or plain lines after it. */
function messageOf(result: Result, comments: readonly string[]): string {
  const diag = result.diag ?? {};
  for (const key of ['message', 'error', 'diff']) {
    const value = diag[key];
    if (typeof value === 'string' && value.trim() !== '')
      return value
        .trim()
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' ');
  }
  // tape names a failing assertion by its message and puts only the comparison in its YAML.
  if (typeof diag.operator === 'string' && ('expected' in diag || 'actual' in diag))
    return `${diag.operator}: expected ${String(diag.expected)}, actual ${String(diag.actual)}`;
  return comments.join(' ');
}

/**
 * A directive tap-parser left in the name: tape writes a `#` of the description as it is (`ok 3
 * issue #378 # SKIP`), where TAP asks for `\#`, and the parser then reads no directive at all. The
 * last ` # SKIP` or ` # TODO` of a name is its directive, as tape meant it. Found from the last
 * `#` without a pattern that could backtrack over a long name.
 */
function unreadDirective(name: string): { name: string; skip?: string | true; todo?: string | true } | null {
  const hash = name.lastIndexOf('#');
  if (hash <= 0 || !/\s/.test(name[hash - 1] as string)) return null;
  const directive = /^\s*(SKIP|TODO)\b/i.exec(name.slice(hash + 1));
  if (!directive) return null;
  const reason = name.slice(hash + 1 + directive[0].length).trim() || true;
  return { name: name.slice(0, hash).trimEnd(), [(directive[1] as string).toLowerCase()]: reason };
}

function toCase(parsed: Result, comments: readonly string[]): TestCase {
  const unread = parsed.skip || parsed.todo ? null : unreadDirective(parsed.fullname || parsed.name);
  const result: Result = unread ? { ...parsed, ...unread, fullname: unread.name } : parsed;
  const skipped = Boolean(result.skip) || Boolean(result.todo);
  const name = result.fullname || result.name;
  return {
    name,
    outcome: skipped ? 'skipped' : result.ok ? 'passed' : 'failed',
    message: result.ok || skipped ? '' : messageOf(result, comments),
    fileLevel: isFileLevelName(result.name),
    ...(result.todo ? { ranAs: result.ok ? ('passed' as const) : ('failed' as const) } : {}),
  };
}

/** One TAP document (from a `TAP version` line to the next). */
function parseDocument(lines: readonly string[], truncated: boolean): TestRun | null {
  if (!looksLikeTap(lines)) return null;
  const events: Event[] = [];
  let plan = { end: -1, count: 0 };
  const parser = new Parser();
  parser.on('result', (result: Result) => events.push({ kind: 'result', result }));
  parser.on('comment', (text: string) => events.push({ kind: 'comment', text: text.trim() }));
  // mocha's tap reporter writes a failure's message and stack as indented plain lines, no YAML.
  parser.on('extra', (text: string) => events.push({ kind: 'extra', text: text.trim() }));
  parser.on('bailout', (reason: string) => events.push({ kind: 'bailout', reason: String(reason ?? '').trim() }));
  parser.on('complete', (final: { plan: { end: number }; count: number }) => (plan = { end: final.plan.end, count: final.count }));
  // The parser is synchronous when handed the whole text: every event has fired when end returns.
  parser.end(`${lines.join('\n')}\n`);

  const cases: TestCase[] = [];
  for (const [i, event] of events.entries()) {
    if (event.kind === 'bailout') cases.push({ name: 'Bail out!', outcome: 'failed', message: event.reason, fileLevel: false });
    if (event.kind !== 'result') continue;
    // Test::More-style diagnostics: the '#' comments right after a failing point explain it.
    const comments: string[] = [];
    for (let j = i + 1; j < events.length; j++) {
      const next = events[j] as Event;
      if (next.kind === 'extra') {
        // The message ends at its first blank line or stack frame; what follows repeats it.
        if (next.text === '' || /^at\s/.test(next.text)) break;
        comments.push(next.text);
        continue;
      }
      if (next.kind !== 'comment' || SUMMARY.test(next.text)) break;
      comments.push(next.text.replace(/^#\s*/, ''));
    }
    cases.push(toCase(event.result, comments));
  }
  const summary = trailingSummary(events);
  // tap-parser makes up a plan for a stream without one; only a plan the runner printed counts here.
  const planned = lines.some((l) => /^1\.\.\d+/.test(l));
  const complete = HEADER.test(lines.find((l) => l.trim() !== '') ?? '') && !truncated && planned && plan.count >= plan.end;
  const bailed = events.some((e) => e.kind === 'bailout');
  if (plan.end > plan.count && !bailed && !(summary && !complete)) {
    cases.push({ name: '(plan)', outcome: 'failed', message: `planned ${plan.end} tests, ${plan.count} ran`, fileLevel: false });
  }
  const node =
    summary?.has('suites') || summary?.has('cancelled') || events.some((e) => e.kind === 'result' && e.result.diag !== null && 'duration_ms' in e.result.diag);
  // node's summary counts every leaf it ran: more passing points than that were not its own.
  const passingPoints = cases.filter((c) => c.outcome === 'passed' && !c.fileLevel).length;
  const tampered =
    complete && node && summary?.has('pass') && passingPoints > (summary.get('pass') ?? 0)
      ? `the output shows ${passingPoints} passing tests and the runner's summary ${summary.get('pass')}: lines were written into the runner's output`
      : undefined;
  return {
    ...(planned && plan.end === 0 && cases.length === 0 ? { declaredEmpty: true } : {}),
    format: node ? 'node-test' : 'tap',
    cases,
    ...(tampered === undefined ? {} : { tampered }),
    summary:
      !complete && summary?.has('pass') && summary.has('fail')
        ? {
            passed: summary.get('pass') ?? 0,
            failed: (summary.get('fail') ?? 0) + (summary.get('cancelled') ?? 0),
            skipped: (summary.get('skipped') ?? 0) + (summary.get('todo') ?? 0),
          }
        : null,
  };
}

/** The runner's summary: `# key N` comments after the last test point, nothing else after them. */
function trailingSummary(events: readonly Event[]): Map<string, number> | null {
  const last = events.findLastIndex((e) => e.kind !== 'comment');
  const tail = events.slice(last + 1).filter((e): e is Extract<Event, { kind: 'comment' }> => e.kind === 'comment');
  const summary = new Map<string, number>();
  for (const { text } of tail) {
    const match = SUMMARY.exec(text);
    if (!match) continue;
    // The last of each: the runner prints its summary after everything a test wrote.
    summary.set(match[1] as string, Number(match[2]));
  }
  return summary.size > 0 ? summary : null;
}

/**
 * Reads every TAP document in a log (several runs in one step add up).
 * @param truncated the log is a tail of the output: its first document lacks its beginning.
 * @returns null when the log holds no TAP.
 */
export function parseTap(output: string, truncated = false): TestRun | null {
  const lines = stripTerminalEscapes(output).split(/\r?\n/);
  const documents: string[][] = [[]];
  let started = false;
  for (const line of lines) {
    if (HEADER.test(line) && started) {
      documents.push([]);
      started = false;
    }
    (documents.at(-1) as string[]).push(line);
    started ||= line.trim() !== '';
  }
  return mergeRuns(documents.map((doc, i) => parseDocument(doc, truncated && i === 0)));
}
