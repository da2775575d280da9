/**
 * The closing line a test runner prints for a whole run (pytest, jest, vitest, node --test), read
 * from a step's output to be held against the report file the same run wrote. Pure.
 *
 * A report file is written by the test process, which the code under test shares: it can rewrite
 * the file after the runner wrote it (an exit hook) and then exit 0. What the runner printed
 * before that is already in the gate's log, where nothing in the sandbox reaches it again.
 */
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';

/** What a runner's summary line counts: passed and failed tests (errors count as failed). */
export interface RunnerSummary {
  runner: 'pytest' | 'jest' | 'vitest' | 'node';
  passed: number;
  failed: number;
}

/** `=== 1 failed, 2 passed, 1 xfailed in 0.12s ===` (the `=` frame is absent under -q), or `no tests ran in 0.01s`. */
const PYTEST = /^(?:=+ )?((?:\d+ [a-z]+(?:, )?)+|no tests ran) in [\d.]+s(?: \([^)]*\))?(?: =+)?$/;
/** `Tests:       1 failed, 1 skipped, 2 passed, 4 total` */
const JEST = /^Tests:\s+((?:\d+ [a-z]+,\s*)*\d+ total)$/;
/** ` Tests  1 failed | 2 passed | 1 skipped | 1 expected fail (5)` */
const VITEST = /^Tests\s+((?:\d+ [a-z]+(?: [a-z]+)*(?:\s+\|\s+)?)+)\s*\(\d+\)$/;
/** `# pass 3` (tap) or `ℹ pass 3` (spec), with `fail` and `cancelled` beside them. */
const NODE = /^(?:#|ℹ) (pass|fail|cancelled) (\d+)$/;

function countsIn(list: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of list.matchAll(/(\d+) ([a-z]+)/g)) counts.set(m[2] as string, (counts.get(m[2] as string) ?? 0) + Number(m[1]));
  return counts;
}

const sum = (counts: Map<string, number>, ...words: string[]) => words.reduce((n, w) => n + (counts.get(w) ?? 0), 0);

/** One summary line, or null when the line is none of the runners'. */
function summaryOf(line: string): RunnerSummary | null {
  const pytest = PYTEST.exec(line);
  // An xpassed test is a pass in pytest's JUnit (a strict one is failed, and counted as failed here too).
  if (pytest) {
    const c = countsIn(pytest[1] as string);
    return { runner: 'pytest', passed: sum(c, 'passed', 'xpassed'), failed: sum(c, 'failed', 'error', 'errors') };
  }
  const jest = JEST.exec(line);
  if (jest) {
    const c = countsIn(jest[1] as string);
    return { runner: 'jest', passed: sum(c, 'passed'), failed: sum(c, 'failed') };
  }
  const vitest = VITEST.exec(line);
  if (vitest) {
    const c = countsIn(vitest[1] as string);
    // A test.fails that failed as it must is a pass in vitest's JUnit.
    return { runner: 'vitest', passed: sum(c, 'passed', 'expected'), failed: sum(c, 'failed') };
  }
  return null;
}

/**
 * Every runner summary the output holds, in order (a command may run its runner more than once).
 * node's closing block is one summary of its `pass`, `fail` and `cancelled` lines.
 */
export function runnerSummaries(output: string): RunnerSummary[] {
  const found: RunnerSummary[] = [];
  let node: RunnerSummary | null = null;
  for (const raw of stripTerminalEscapes(output).split(/\r?\n/)) {
    const line = raw.trim();
    const n = NODE.exec(line);
    if (n) {
      if (n[1] === 'pass' || node === null) {
        node = { runner: 'node', passed: 0, failed: 0 };
        found.push(node);
      }
      if (n[1] === 'pass') node.passed = Number(n[2]);
      else node.failed += Number(n[2]);
      continue;
    }
    node = null;
    const summary = summaryOf(line);
    if (summary) found.push(summary);
  }
  return found;
}

/**
 * Why a report's counts disagree with what the runner printed, or null when they agree or the
 * output holds no runner summary. Summaries are grouped by runner (a command may run two, one of
 * them writing the report); the report must agree with one group: with its last summary (the
 * run that wrote the file) or the sum of all of them (a run per file), and count no fewer
 * failures than any one of them printed. A summary printed after the runner's own line (an exit
 * hook printing one that matches its rewritten file) does not take that line back.
 */
export function summaryMismatch(output: string, report: { passed: number; failed: number }): string | null {
  const summaries = runnerSummaries(output);
  if (summaries.length === 0) return null;
  const agrees = (s: { passed: number; failed: number }) => s.passed === report.passed && s.failed === report.failed;
  const groups = [...new Set(summaries.map((s) => s.runner))].map((runner) => summaries.filter((s) => s.runner === runner));
  const problems = groups.map((group) => {
    const hidden = group.find((s) => s.failed > report.failed);
    if (hidden) return hidden;
    const total = group.reduce((t, s) => ({ passed: t.passed + s.passed, failed: t.failed + s.failed }), { passed: 0, failed: 0 });
    return agrees(group.at(-1) as RunnerSummary) || agrees(total) ? null : (group.at(-1) as RunnerSummary);
  });
  if (problems.some((p) => p === null)) return null;
  const shown = problems.find((p) => p !== null) as RunnerSummary;
  return `the report file says ${report.passed} passed, ${report.failed} failed, and ${shown.runner} itself printed ${shown.passed} passed, ${shown.failed} failed: something rewrote the report after the runner wrote it`;
}
