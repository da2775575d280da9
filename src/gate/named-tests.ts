/**
 * Running only the tests a failure named, and knowing a base's results from its record. Pure.
 *
 * A failed step is run again (is it flaky?) and, when it fails twice, on the base (is the base
 * broken?). Both questions are about the tests that failed, not the whole suite: the run again
 * asks the runner for those tests alone, by name, and the base is asked only about the failing
 * tests its record (the passing names its own gate stored, see test-baseline.ts) does not know.
 * Where the step's command has no runner that takes a filter, or its output names no failing
 * test, the whole step runs, as it always did.
 *
 * The record only ever condemns: a failing test that passed on the base by its record is the
 * change's failure. Nothing in a record excuses one: "fails on the base too" is only ever
 * learned by running the test on the base tree, which the change cannot touch.
 */
import { namesWith, stableTestName, type TestCase, type TestRun } from './reports/cases.js';
import { COUNTED_NAME } from './reports/vitest.js';

/** Past this many names the command line grows long and the whole step is the cheaper question. */
const MOST_NAMES = 40;

/** What the canaries are named (canary/judge-canaries.ts): a filtered run must still run them. */
const CANARY_PATTERN = '^genesis-canary ';

/**
 * The failed individual tests of a run, as reported, or null when they cannot be named: no
 * report, a failure of a whole file (its tests never had names), a runner summary counting more
 * failures than the names seen (a tail cut from a long log), or none named at all.
 */
export function failedTestNames(run: TestRun | null): string[] | null {
  if (!run) return null;
  const failed = run.cases.filter((c) => c.outcome === 'failed');
  if (failed.length === 0 || failed.some((c) => c.fileLevel)) return null;
  const names = [...new Set(failed.map((c) => c.name))];
  if (run.summary && run.summary.failed > names.length) return null;
  return names.length <= MOST_NAMES ? names : null;
}

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// `node --test`, with any node options before --test: where node's own name filter goes.
const NODE_TEST = /(^|[\s;&|(])(node(?:\s+-[-\w]+(?:=\S*)?)*\s+--test)(?=\s|$)/g;

/**
 * The step's command asking its runner for `names` only (and the canaries), or null when the
 * command starts no runner this knows how to filter. node's --test-name-pattern matches one level
 * of a test's name, so every level of each name is asked for: a superset, never fewer than asked.
 */
export function commandForTests(command: string, names: readonly string[]): string | null {
  if (names.length === 0 || !NODE_TEST.test(command)) return null;
  NODE_TEST.lastIndex = 0;
  const levels = [...new Set(names.flatMap((n) => n.split(' > ')))];
  const patterns = [CANARY_PATTERN, ...levels.map((l) => `^${escapeRegExp(l)}$`)];
  const flags = patterns.map((p) => quote(`--test-name-pattern=${p}`)).join(' ');
  return command.replace(NODE_TEST, (_all, before: string, node: string) => `${before}${node} ${flags}`);
}

/** True when `run` reports every one of `names` (passed or failed): the filter reached them. */
export function reportsAll(run: TestRun | null, names: readonly string[]): boolean {
  if (!run) return false;
  const reported = new Set(run.cases.filter((c) => !c.fileLevel && c.outcome !== 'skipped').map((c) => stableTestName(c.name)));
  return names.every((n) => reported.has(stableTestName(n)));
}

/**
 * True when `run` reports every one of `names` passing and none of them failing: only then has a run
 * again shown the failed tests to be flaky. A run again that reports none of them (a filter that
 * matched nothing, a runner that lost its own channel, a name printed by the code rather than
 * the runner) shows nothing, whatever its exit code. Where a reporter names no passing test (vitest's
 * and jest's default: `<file> > (passing test n)`), a name counts as passing against one counted
 * pass of its own file.
 */
export function passesAll(run: TestRun | null, names: readonly string[]): boolean {
  if (!run) return false;
  const failed = new Set(namesWith(run, 'failed'));
  const passed = new Set(namesWith(run, 'passed'));
  const counted = new Map<string, number>();
  for (const c of run.cases) {
    const file = !c.fileLevel && c.outcome === 'passed' ? COUNTED_NAME.exec(c.name)?.[1] : undefined;
    if (file) counted.set(file, (counted.get(file) ?? 0) + 1);
  }
  for (const name of names) {
    const stable = stableTestName(name);
    if (failed.has(stable)) return false;
    if (passed.has(stable)) continue;
    const file = name.split(' > ')[0] ?? '';
    const left = counted.get(file) ?? 0;
    if (left === 0) return false;
    counted.set(file, left - 1);
  }
  return true;
}

/**
 * The whole step's run as the run again of its failed tests leaves it: the first run's other
 * tests as they were, the re-run tests as they came out the second time. A runner summary (a tail
 * cut from a long log) moves by the re-run tests that passed.
 */
export function withRerun(first: TestRun, rerun: TestRun, names: readonly string[]): TestRun {
  const asked = new Set(names.map(stableTestName));
  const again = rerun.cases.filter((c) => asked.has(stableTestName(c.name)));
  const kept = first.cases.filter((c: TestCase) => !asked.has(stableTestName(c.name)));
  const nowPassing = new Set(again.filter((c) => c.outcome === 'passed').map((c) => stableTestName(c.name))).size;
  const summary = first.summary
    ? { ...first.summary, passed: first.summary.passed + nowPassing, failed: Math.max(0, first.summary.failed - nowPassing) }
    : null;
  return { ...first, cases: [...kept, ...again], summary };
}

/** Which failing tests a base's record says passed there (the change's failures), and which it does not know. */
export function splitByRecord(failing: readonly string[], basePassing: readonly string[] | undefined): { passedOnBase: string[]; unknown: string[] } {
  const passed = new Set((basePassing ?? []).map(stableTestName));
  return {
    passedOnBase: failing.filter((n) => passed.has(stableTestName(n))),
    unknown: failing.filter((n) => !passed.has(stableTestName(n))),
  };
}

/** True when `run` reports any of `names`, whatever its outcome: the run can say something about them. */
export function reportsAny(run: TestRun | null, names: readonly string[]): boolean {
  if (!run) return false;
  const reported = new Set(run.cases.filter((c) => !c.fileLevel).map((c) => stableTestName(c.name)));
  return names.some((n) => reported.has(stableTestName(n)));
}

/** True when every one of `names` is reported failing in the base's run: only then is the failure the base's. */
export function allFailOn(run: TestRun | null, names: readonly string[]): boolean {
  if (!run) return false;
  const failing = new Set(run.cases.filter((c) => c.outcome === 'failed').map((c) => stableTestName(c.name)));
  return names.every((n) => failing.has(stableTestName(n)));
}
