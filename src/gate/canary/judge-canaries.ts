/**
 * What the gate's canaries say about one step's run, and the run without them. Pure.
 *
 * Every canary is named `genesis-canary <nonce> <process> must-pass|must-fail`, the nonce drawn
 * for this gate. A must-pass canary must be reported passing. A must-fail one must come out as its
 * runner reports a test that failed on purpose: node's todo that ran and failed (TAP `not ok …
 * # TODO`, spec ✖ with a reason, JUnit's todo with a failure), pytest's plain failure, or
 * vitest's `test.fails` or jest's `test.failing` reported passing. A root
 * hook of node's preload that fails names the nonce with `tampered`. Anything else is
 * `runner-tampered`. A process whose canaries are missing is not judged: a file that exits before
 * they report is the tests' own failure, and what ran is judged by the other rules.
 */
import { reportOf, type TestCase, type TestRun } from '../reports/cases.js';
import { COUNTED_NAME } from '../reports/vitest.js';

export type CanaryVerdict = { run: TestRun } | { problem: { reason: 'runner-tampered'; message: string } };

const ROLE = / (must-pass|must-fail)$/;

function wrongOutcome(c: TestCase, role: string): string | null {
  if (role === 'must-pass') return c.outcome === 'passed' ? null : `was reported ${c.outcome}`;
  // vitest's and jest's must-fail canaries are test.fails and test.failing: reported passing when their body threw, as they must.
  if (/ (vitest|jest)-\S+ must-fail$/.test(c.name)) return c.outcome === 'passed' ? null : `was reported ${c.outcome}`;
  const asItMust = c.outcome === 'failed' || (c.outcome === 'skipped' && c.ranAs === 'failed');
  return asItMust ? null : `was reported ${c.ranAs === 'passed' ? 'a todo that passed' : c.outcome}`;
}

/**
 * Checks this gate's canaries in `run` and returns the run without them (their cases, and their
 * share of a runner summary), so that they never count for or against a world.
 */
export function judgeCanaries(run: TestRun, nonce: string): CanaryVerdict {
  const marker = `genesis-canary ${nonce} `;
  const canaries: Array<{ testCase: TestCase; role: string }> = [];
  const others: TestCase[] = [];
  for (const c of run.cases) {
    const role = c.name.includes(marker) ? ROLE.exec(c.name)?.[1] : undefined;
    if (role) canaries.push({ testCase: c, role });
    else others.push(c);
  }
  const tampered = others.find((c) => c.outcome === 'failed' && c.message.includes(`genesis-canary ${nonce} tampered`));
  if (tampered)
    return { problem: { reason: 'runner-tampered', message: `a canary of the gate failed after the tests ran: ${tampered.message.slice(0, 300)}` } };
  for (const { testCase, role } of canaries) {
    const wrong = wrongOutcome(testCase, role);
    if (wrong)
      return {
        problem: {
          reason: 'runner-tampered',
          message: `the gate's ${role} canary test ${wrong}: code under test changed what its runner reports, or disabled its assertions`,
        },
      };
  }
  if (canaries.length === 0) return { run: withoutCountedCanaries(run) };
  const stripped: TestRun = { ...run, cases: others };
  if (!run.summary) return { run: stripped };
  // A summary counted the canaries the output showed; leave out just those.
  const shown = reportOf({ ...run, cases: canaries.map((c) => c.testCase), summary: null });
  return {
    run: {
      ...stripped,
      summary: {
        passed: Math.max(0, run.summary.passed - shown.passed),
        failed: Math.max(0, run.summary.failed - shown.failed),
        skipped: Math.max(0, run.summary.skipped - shown.skipped),
      },
    },
  };
}

/**
 * vitest's default reporter names no passing test, so a file's two canaries (a must-pass and a
 * test.fails, both passing when the runner is sound) are inside its count of passing tests. When
 * every file reported that way ran them (as many expected failures as files), each file's count
 * and the summary leave them out; a file whose canaries never registered then counts two fewer,
 * which only makes its tests look vanished, never present. A pool that runs no canaries (threads)
 * reports no expected failure and is left as it is.
 */
function withoutCountedCanaries(run: TestRun): TestRun {
  if (run.format !== 'vitest') return run;
  const byFile = new Map<string, number>();
  for (const c of run.cases) {
    const m = COUNTED_NAME.exec(c.name);
    if (m) byFile.set(m[1] as string, Math.max(byFile.get(m[1] as string) ?? 0, Number(m[2])));
  }
  if (byFile.size === 0 || (run.expectedFailures ?? 0) < byFile.size) return run;
  const cases = run.cases.filter((c) => {
    const m = COUNTED_NAME.exec(c.name);
    return !m || Number(m[2]) <= (byFile.get(m[1] as string) as number) - 2;
  });
  const removed = run.cases.length - cases.length;
  return { ...run, cases, ...(run.summary ? { summary: { ...run.summary, passed: Math.max(0, run.summary.passed - removed) } } : {}) };
}
