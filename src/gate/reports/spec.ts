/**
 * node --test's spec reporter (`--test-reporter=spec`, its default on a terminal). Pure.
 *
 * The spec reporter passes what tests print through untouched, so any line of it may be forged
 * by the code under test. Counts come only from the runner's final summary block: the last
 * `ℹ tests N` line and the summary lines that follow it. Test names (for failures and the
 * by-name comparison with the base) come from the ✔/✖ lines and are as trustworthy as the output;
 * prefer TAP (node's default off a terminal) or JUnit for a world that must not be gamed.
 */
import { isFileLevelName, type TestCase, type TestRun } from './cases.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

// What follows a point's mark: its title, then perhaps ` (1.2ms)` and a skipped or todo test's ` # reason`.
// Read in two steps (the mark, then the duration from the left), each linear: one expression with a lazy
// title before optional white space backtracked as the square of a run of spaces a test printed.
const POINT = /^(\s*)([✔✖﹣])(\s.*)$/;
const DURATION = /\([\d.]+ms\)/g;
const REASON = /^\s+#\s*(.*)$/;
/** A failing point's message is clipped to a few hundred characters: reading further lines adds nothing to it. */
const BODY_LINES = 50;
const SUMMARY = /^(?:#|ℹ)\s+(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\s+([\d.]+)\s*$/;

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** A point's title and reason: the first ` (Nms)` after some white space that ends the line or starts ` # reason`. */
function titleAndReason(after: string): { title: string; reason: string | undefined } {
  for (const m of after.matchAll(DURATION)) {
    const at = m.index;
    // `\s+title\s+(`: white space before the duration, and at least one more before the (possibly empty) title.
    if (at < 2 || !/\s/.test(after[at - 1] as string)) continue;
    const rest = after.slice(at + m[0].length);
    const reason = rest === '' ? undefined : REASON.exec(rest)?.[1];
    if (rest === '' || reason !== undefined) return { title: after.slice(0, at).trim(), reason };
  }
  return { title: after.trim(), reason: undefined };
}

/** Ancestor names by indent; setting one forgets deeper ones, as a new sibling closes them. */
function pushAncestor(ancestors: Map<number, string>, indent: number, name: string): void {
  for (const depth of ancestors.keys()) if (depth >= indent) ancestors.delete(depth);
  ancestors.set(indent, name);
}

function fullName(ancestors: Map<number, string>, indent: number, name: string): string {
  const above = [...ancestors].filter(([depth]) => depth < indent).sort(([a], [b]) => a - b);
  return [...above.map(([, n]) => n), name].join(' > ');
}

/** The last summary block: from the last `tests` line, the summary lines right after it. */
function finalSummary(lines: readonly string[]): Map<string, number> | null {
  const start = lines.findLastIndex((l) => SUMMARY.exec(l.trim())?.[1] === 'tests');
  if (start === -1) return null;
  const summary = new Map<string, number>();
  for (const line of lines.slice(start)) {
    const match = SUMMARY.exec(line.trim());
    if (!match || summary.has(match[1] as string)) break;
    summary.set(match[1] as string, Number(match[2]));
  }
  return summary;
}

interface Point {
  indent: number;
  testCase: TestCase | null;
}

/** @returns null unless the output ends with node's spec summary. */
export function parseSpec(output: string): TestRun | null {
  const lines = stripTerminalEscapes(output).split(/\r?\n/);
  const summary = finalSummary(lines);
  // Other tools print ✔ too; Node's summary is what makes this spec output.
  if (!summary?.has('pass') || !summary.has('fail')) return null;
  const points: Point[] = [];
  const ancestors = new Map<number, string>();
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    // The reporter repeats every failure after the summary; counting them again would double them.
    if (/^\s*✖ failing tests:/.test(line)) break;
    const suite = /^(\s*)▶\s+(.*)$/.exec(line);
    if (suite) {
      pushAncestor(ancestors, (suite[1] as string).length, (suite[2] as string).trim());
      continue;
    }
    const match = POINT.exec(line);
    if (!match) continue;
    const indent = (match[1] as string).length;
    const body: string[] = [];
    for (let j = i + 1; match[2] === '✖' && j < lines.length && j <= i + BODY_LINES; j += 1) {
      const next = lines[j] as string;
      if (next.trim() === '') continue;
      if (indentOf(next) <= indent || /^\s*at\s/.test(next)) break;
      body.push(next.trim());
    }
    // Children are printed before their parent's line: a shallower point closes a suite, no test.
    const previous = points.at(-1);
    if (previous !== undefined && previous.indent > indent) {
      points.push({ indent, testCase: null });
      continue;
    }
    // Node marks skipped tests with ﹣ and appends '# reason' only to skipped and todo tests.
    const { title, reason } = titleAndReason(match[3] as string);
    const skipped = match[2] === '﹣' || reason !== undefined;
    points.push({
      indent,
      testCase: {
        name: fullName(ancestors, indent, title),
        outcome: skipped ? 'skipped' : match[2] === '✖' ? 'failed' : 'passed',
        message: body.join(' '),
        fileLevel: isFileLevelName(title),
        ...(reason !== undefined && match[2] !== '﹣' ? { ranAs: match[2] === '✖' ? ('failed' as const) : ('passed' as const) } : {}),
      },
    });
  }
  return {
    format: 'node-test',
    cases: points.flatMap((p) => (p.testCase ? [p.testCase] : [])),
    summary: {
      passed: summary.get('pass') ?? 0,
      failed: (summary.get('fail') ?? 0) + (summary.get('cancelled') ?? 0),
      skipped: (summary.get('skipped') ?? 0) + (summary.get('todo') ?? 0),
    },
  };
}
