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

const POINT = /^(\s*)([✔✖﹣])\s+(.*?)(?:\s+\([\d.]+ms\)(?:\s+#\s*(.*))?)?$/;
const SUMMARY = /^(?:#|ℹ)\s+(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\s+([\d.]+)\s*$/;

const indentOf = (line: string): number => line.length - line.trimStart().length;

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
    for (let j = i + 1; match[2] === '✖' && j < lines.length; j += 1) {
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
    const skipped = match[2] === '﹣' || match[4] !== undefined;
    const title = (match[3] as string).trim();
    points.push({
      indent,
      testCase: {
        name: fullName(ancestors, indent, title),
        outcome: skipped ? 'skipped' : match[2] === '✖' ? 'failed' : 'passed',
        message: body.join(' '),
        fileLevel: isFileLevelName(title),
        ...(match[4] !== undefined && match[2] !== '﹣' ? { ranAs: match[2] === '✖' ? ('failed' as const) : ('passed' as const) } : {}),
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
