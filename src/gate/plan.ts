import type { TaskSpec, WorldManifest } from '../manifest/schema.js';

export interface GateStep {
  /** setup, build, test, or check:<task id> */
  name: string;
  command: string;
  /** Why this run of it happens, when not for the change itself: kept in the step's record. */
  why?: string;
  /**
   * For checks of done tasks run together in one run: each check's task and own command. Each
   * passing test of the run is kept under the command of the check whose files define it (see
   * attribution/check-owners.ts), and the base's are read from all of them, so a baseline stays
   * keyed by check whichever checks a later gate runs together, or runs alone.
   */
  checks?: Array<{ id: string; command: string }>;
}

/** Why a check of a run together ran alone after it: its tests could not be told from the others' (see attribution/check-owners.ts). */
export const CHECK_ALONE_WHY = "the change, its check alone: the run together could not tell its tests from the others'";

/** The commands under which a step's passing tests are kept and its base's are read. */
export function baselineKeys(step: Pick<GateStep, 'command' | 'checks'>): string[] {
  return step.checks?.map((c) => c.command) ?? [step.command];
}

/**
 * The commands a candidate must pass, read from the accepted head's manifest: setup, build, the
 * world's test, the episode's own task check, and the check of every task already done (so
 * nothing that landed can be broken later). Checks of tasks not yet done are not run. Checks of
 * done tasks that one runner can run together (see {@link checksRunTogether}) are one step.
 */
export function planGate(manifest: WorldManifest, task: TaskSpec | null, doneTasks: ReadonlySet<string>): GateStep[] {
  const steps: GateStep[] = [];
  if (manifest.verify.setup.trim()) steps.push({ name: 'setup', command: manifest.verify.setup });
  if (manifest.verify.build.trim()) steps.push({ name: 'build', command: manifest.verify.build });
  steps.push({ name: 'test', command: manifest.verify.test });
  const seen = new Set([manifest.verify.test]);
  const checked = manifest.tasks.filter((t) => t.check && (t.id === task?.id || doneTasks.has(t.id)));
  const checks: Array<{ id: string; command: string }> = [];
  for (const t of checked) {
    if (seen.has(t.check!)) continue;
    seen.add(t.check!);
    checks.push({ id: t.id, command: t.check! });
  }
  // The task's own check stays a step of its own: it alone is never asked about on the base.
  return [...steps, ...checksRunTogether(checks, task?.id ?? null)];
}

// `node --test` (with node's own options before --test) and nothing after it but the paths of test
// files or folders: such commands differ only in what they run, and one run of every path is
// each of them run in turn (node still runs each file in a process of its own, canaries and all).
const NODE_TEST_PATHS = /^(node(?:\s+--?[\w-]+(?:=[\w./@+:-]+)?)*\s+--test)((?:\s+[\w.@+][\w./@+-]*)+)\s*$/;

/** The paths a `node --test` command over paths runs (as written, `./` and a last `/` dropped), or null for any other command. */
export function testPathsOf(command: string): string[] | null {
  const match = NODE_TEST_PATHS.exec(command.trim());
  return match
    ? match[2]!
        .trim()
        .split(/\s+/)
        .map((p) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, ''))
    : null;
}

// One path holding another (a folder and a file in it, or the same path twice): node runs such a
// file once when both are given, so two checks that share one would not each get their tests.
const overlaps = (a: string, b: string): boolean => a === b || a === '.' || b === '.' || a === '' || b === '' || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/**
 * The checks as steps, those of done tasks whose commands are the same runner over paths merged
 * into one step per runner (named after every task, `check:a+b`, at the place of the first): one
 * sandbox, one tree copy and one runner start instead of one each. Its tests, and so their
 * verdicts, are the union of theirs; its `checks` keep each task's command for the baselines. A
 * check whose paths overlap those of the step it would join stays a step of its own: the run
 * together must hold each check's tests as many times as the checks run alone do.
 */
export function checksRunTogether(checks: ReadonlyArray<{ id: string; command: string }>, ownTask: string | null): GateStep[] {
  const groups = new Map<string, { ids: string[]; commands: string[]; paths: string[] }>();
  const steps: Array<GateStep | { runner: string }> = [];
  for (const check of checks) {
    const match = check.id === ownTask ? null : NODE_TEST_PATHS.exec(check.command.trim());
    if (!match) {
      steps.push({ name: `check:${check.id}`, command: check.command });
      continue;
    }
    const runner = match[1]!.replace(/\s+/g, ' ');
    const paths = testPathsOf(check.command)!;
    const group = groups.get(runner);
    if (group && paths.some((p) => group.paths.some((q) => overlaps(p, q)))) {
      steps.push({ name: `check:${check.id}`, command: check.command });
      continue;
    }
    if (!group) steps.push({ runner });
    const into = group ?? { ids: [], commands: [], paths: [] };
    groups.set(runner, into);
    into.ids.push(check.id);
    into.commands.push(check.command);
    for (const path of paths) if (!into.paths.includes(path)) into.paths.push(path);
  }
  return steps.map((s) => {
    if (!('runner' in s)) return s;
    const group = groups.get(s.runner)!;
    if (group.ids.length === 1) return { name: `check:${group.ids[0]}`, command: group.commands[0]! };
    const checks = group.ids.map((id, i) => ({ id, command: group.commands[i]! }));
    return { name: `check:${group.ids.join('+')}`, command: `${s.runner} ${group.paths.join(' ')}`, checks };
  });
}

/** The one-line summary carried by the Genesis-Verified trailer. */
export function summarizeGate(
  sandbox: string,
  steps: Array<{ name: string; exitCode: number; durationMs: number; tests: { passed: number; failed: number } | null }>,
): string {
  const parts = steps.map((s) => {
    const tests = s.tests ? ` ${s.tests.passed} passed ${s.tests.failed} failed` : '';
    return `${s.name} ${s.exitCode === 0 ? 'ok' : `exit ${s.exitCode}`}${tests}`;
  });
  const seconds = steps.reduce((sum, s) => sum + s.durationMs, 0) / 1000;
  return `${sandbox}: ${parts.join('; ')} (${seconds.toFixed(1)}s)`;
}

const SUMMARY = /^(\w+)(?: ([^\s@]+)@sha256:[0-9a-f]+)?: (.*) \((\d+(?:\.\d+)?)s\)(?:; verified again on (\w+) by \S+)?$/;
const STEP = /^(\S+) (ok|exit -?\d+)(?: (\d+) passed (\d+) failed)?$/;

/**
 * A gate summary (summarizeGate's line, with the image withImageInSummary put in) told briefly
 * for a table: where it ran, the test step's passing tests of those it counted, the checks as one
 * tally, and the time, e.g. `docker genesis/node:20 · 9/10 tests · 2 checks ok · 3.8s`. A line of
 * another shape (an old trailer, "passed") comes back as it is. `time: false` leaves the time out
 * (for a table that has a column of its own for it).
 */
export function briefGateSummary(summary: string, options: { time?: boolean } = {}): string {
  const match = SUMMARY.exec(summary);
  if (!match) return summary;
  const [, sandbox, image, stepsText, seconds] = match;
  const parsed = stepsText!.split('; ').map((s) => STEP.exec(s));
  if (parsed.some((s) => !s)) return summary;
  const steps = parsed.map((s) => ({ name: s![1]!, status: s![2]!, passed: s![3] === undefined ? null : Number(s![3]), failed: Number(s![4] ?? 0) }));
  const parts = [image ? `${sandbox} ${image}` : sandbox!];
  for (const s of steps) {
    if (s.name === 'test') parts.push(s.passed === null ? `test ${s.status}` : `${s.passed}/${s.passed + s.failed} tests`);
    else if (!s.name.startsWith('check:') && s.status !== 'ok') parts.push(`${s.name} ${s.status}`);
  }
  const checks = steps.filter((s) => s.name.startsWith('check:'));
  const failing = checks.filter((s) => s.status !== 'ok').map((s) => `${s.name} ${s.status}`);
  if (failing.length > 0) parts.push(failing.join(', '));
  else if (checks.length > 0) {
    // A step of checks run together (check:a+b) is a check of each of its tasks.
    const tasks = checks.reduce((sum, s) => sum + s.name.slice('check:'.length).split('+').length, 0);
    parts.push(`${tasks} check${tasks === 1 ? '' : 's'} ok`);
  }
  if (options.time !== false) parts.push(`${seconds}s`);
  return parts.join(' · ');
}

/**
 * A gate's steps as lines for a person: each with why it ran, its time, its exit and its tests,
 * and a last line adding up what the steps the change did not ask for cost (run again, on the
 * base): what a rejection cost, at a glance.
 */
export function describeGateSteps(
  steps: ReadonlyArray<{ name: string; why?: string; exitCode: number; durationMs: number; tests: { passed: number; failed: number } | null }>,
): string[] {
  const width = Math.max(0, ...steps.map((s) => s.name.length));
  const lines = steps.map((s) => {
    const tests = s.tests ? `, ${s.tests.passed} passed ${s.tests.failed} failed` : '';
    const why = s.why ? `  (${s.why})` : '';
    return `${s.name.padEnd(width)}  ${(s.durationMs / 1000).toFixed(2).padStart(7)}s  ${s.exitCode === 0 ? 'ok' : `exit ${s.exitCode}`}${tests}${why}`;
  });
  const extra = steps.filter((s) => s.why !== undefined && s.why !== 'the change' && s.why !== 'to prepare the tree' && s.why !== CHECK_ALONE_WHY);
  if (extra.length > 0) {
    const ms = extra.reduce((sum, s) => sum + s.durationMs, 0);
    const all = steps.reduce((sum, s) => sum + s.durationMs, 0);
    lines.push(`${extra.length} run${extra.length === 1 ? '' : 's'} to judge a failure: ${(ms / 1000).toFixed(2)}s of ${(all / 1000).toFixed(2)}s`);
  }
  return lines;
}
