import type { DepsCache } from '../deps/cache/cache.js';
import { depsForGate } from '../deps/gate-deps.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { GateRecord, GateStepRecord } from '../ledger/episode-record.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { GateStep } from './plan.js';
import { baselineKeys, CHECK_ALONE_WHY, summarizeGate } from './plan.js';
import { ownersOfTests, readCheckFiles } from './attribution/check-owners.js';
import { judgeStep, ratchetScore, runStep, type RatchetRule, type StepContext, type StepFailure, type StepRun } from './step.js';
import { recordImage, withImageInSummary } from './image.js';
import { GateTree, PREPARING_STEPS } from './tree.js';
import { HOLDOUT_STEP } from './hidden-checks.js';
import { GATE_TIMEOUT_NOTE, onlyTimedOut, PER_TEST_TIMEOUTS_NOTE, TEST_TIMEOUT_FACTOR, withMoreCpus } from './timed-out-tests.js';
import { GateCanaries } from './canary/gate-canaries.js';
import { passingUnder, type TestBaseline } from './test-baseline.js';
import { namesWith, passingNames, reportOf, type TestRun } from './reports/cases.js';
import { allFailOn, commandForTests, failedTestNames, passesAll, reportsAll, reportsAny, splitByRecord, withRerun } from './named-tests.js';
import { ReportBudget } from './reports/files.js';
import { failureSignature } from './reports/printed-counts.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

/**
 * `log` holds the visible steps' output; the hidden checks' output is `hiddenLog` alone, so whoever
 * stores a gate log (the ledger, which agents can read) cannot carry it by mistake. `passing`
 * names the tests each visible command reported passing (the next gates' baseline).
 */
export type GateRunVerdict = (
  | { ok: true; record: GateRecord; log: string; hiddenLog?: string; passing: TestBaseline }
  | { ok: false; reason: RejectionReason; message: string; signature: string; record: GateRecord; log: string; hiddenLog?: string; passing: TestBaseline }
) & {
  /** Every test name the `test` step reported, whatever its outcome: what a ratchet counts from a first commit or an amendment on. */
  testNames: string[];
};

export interface GateRunInput {
  repo: string;
  tree: string;
  steps: GateStep[];
  manifest: WorldManifest;
  sandbox: Sandbox;
  workDir: string;
  /**
   * Tell flaky tests and a broken base from a bad change: a failing step runs once more on the
   * candidate (its failed tests alone where the runner can name them) and, if it fails again and
   * `base` is given and the step is not `ownCheck`, the failed tests the base's record does not
   * know run on the base. Omitted, the first failure decides.
   */
  flaky?: {
    base: string | null;
    ownCheck: string | null;
    /**
     * What the base's own gate stored of it (passing names per command): a test that failed here
     * and passed there is the change's, with no run there. Read when a failure needs it, so a
     * base whose gate was still running when this one started is known by then.
     */
    baseRecord?: () => Promise<TestBaseline>;
    /**
     * Run again only a failure the machine may have made: tests that ran out of their runner's
     * own time, or a step that ran out of the gate's. Any other failing test decides at once: a
     * mutant's gate, where a test that fails is what it asks for. Such a gate's time was cut to
     * the suite's own, so a step that ran out of it is run again with twice that time even when it
     * printed nothing (a quiet runner prints nothing before its first test ends): only a step that
     * runs out of that too is caught by its time, so a loaded machine does not make the verdict.
     */
    onlyTimeouts?: boolean;
  };
  /** Ratchet mode: the `test` step may fail, but its count of passing tests (by the rule's names) may not fall below the floor. */
  ratchet?: RatchetRule;
  /** Hidden tests copied into the work dir only after every visible step passed, then run. */
  holdout?: { dir: string; command: string };
  /** Tests that pass on the accepted head, by command: each must still be reported passing. */
  baseline?: TestBaseline;
  /** Run every step even after one failed (only a failing setup or build stops): to learn a tree's baseline. */
  allSteps?: boolean;
  /** Run every step in this image (a name or an id) instead of verify.image: an audit judging again in the image that judged first. */
  image?: string;
  /** Where verify.deps sets are prepared. @default the machine's cache (src/deps) */
  depsCache?: DepsCache;
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
}

/**
 * Runs a gate plan on a tree, every step and every re-run in a fresh copy of it (what setup and
 * build write is kept for the steps after them), protected paths read-only, within one overall
 * time budget; stops at the first failing step. A failure is a verdict, not an exception. The
 * record names the image that judged (by id), and so does its summary, which becomes the accepted
 * commit's Genesis-Verified trailer.
 */
export async function runGate(input: GateRunInput): Promise<GateRunVerdict> {
  const recording = recordImage(input.sandbox, input.image);
  const verdict = await runGateSteps({ ...input, sandbox: recording.sandbox });
  const image = recording.image();
  if (image) {
    verdict.record.image = image;
    verdict.record.summary = withImageInSummary(verdict.record.summary, input.sandbox.kind, image);
  }
  return verdict;
}

/**
 * The gate's steps, with a prepared dependency set proven unchanged while they run rather than
 * before: walking a large set costs hundreds of milliseconds, which the steps now hide. A set
 * that changed after it was prepared gives no verdict: the gate runs again on a set proven (or
 * prepared again) before its steps.
 */
async function runGateSteps(input: GateRunInput): Promise<GateRunVerdict> {
  const beside: DepsProof = {};
  const verdict = await judgeTree(input, beside);
  if (beside.intact === undefined || (await beside.intact)) return verdict;
  return judgeTree(input, null);
}

/** Where a gate leaves the proof of its dependency set when it is walked beside the steps. */
interface DepsProof {
  intact?: Promise<boolean> | undefined;
}

async function judgeTree(input: GateRunInput, beside: DepsProof | null): Promise<GateRunVerdict> {
  const started = Date.now();
  const ctx: StepContext = {
    sandbox: input.sandbox,
    manifest: input.manifest,
    deadline: started + input.manifest.verify.timeoutSec * 1000,
    records: [],
    logs: [],
    mounts: [],
    reportBudget: new ReportBudget(),
  };
  const flaky: string[] = [];
  const passing: TestBaseline = {};
  let score: number | null = null;
  let testNames: string[] = [];
  let hiddenLog: string | undefined;
  let hiddenMs = 0;
  const finish = (failure: (StepFailure & { signature: string }) | null): GateRunVerdict => {
    // The hidden tests' time is theirs to choose: the gate's recorded time leaves it out.
    const record = gateRecord(input.sandbox.kind, ctx.records, Date.now() - started - hiddenMs, failure === null, flaky, score);
    const common = { record, log: ctx.logs.join('\n'), passing, testNames, ...(hiddenLog === undefined ? {} : { hiddenLog }) };
    return failure ? { ok: false, reason: failure.reason, message: failure.message, signature: failure.signature, ...common } : { ok: true, ...common };
  };
  const tree = await GateTree.export(input.repo, input.tree, input.workDir, input.manifest.protected);
  ctx.canaries = await GateCanaries.create(`${input.workDir}-canary`);
  try {
    // The dependency set is laid out in the pristine tree, so every fresh copy has it.
    const deps = input.manifest.verify.deps
      ? await depsForGate({
          repo: input.repo,
          tree: input.tree,
          manifest: input.manifest,
          sandbox: input.sandbox,
          workDir: tree.layoutDir(),
          cache: input.depsCache,
          base: input.flaky?.base,
          image: input.image,
          ...(input.onWait ? { onWait: input.onWait } : {}),
          proveBeside: beside !== null,
        })
      : null;
    if (beside) beside.intact = deps?.intact;
    if (deps) {
      ctx.records.push(deps.step);
      ctx.logs.push(deps.log);
      if (!deps.ok) return finish({ reason: deps.reason, message: deps.message, signature: deps.signature, rerun: false });
      ctx.mounts = deps.mounts;
    }
    let firstFailure: (StepFailure & { signature: string }) | null = null;
    for (const [index, step] of input.steps.entries()) {
      const judged = await runJudged(input, ctx, tree, step, index, flaky);
      if (step.name === 'test') {
        score = ratchetScore(judged.stepRun.run, judged.stepRun.report, input.ratchet);
        testNames = judged.stepRun.run ? reportedNames(judged.stepRun.run) : [];
      }
      const stops = judged.failure !== null && (!input.allSteps || PREPARING_STEPS.has(step.name) || judged.failure.reason === 'gate-timeout');
      // A step with no readable report still ran: its baseline is known to name no test, so a gate that
      // waits for this tree's baseline is not left waiting for a command that will never be stored.
      if (!PREPARING_STEPS.has(step.name) && !step.checks) passing[step.command] = judged.stepRun.run ? passingNames(judged.stepRun.run) : [];
      const alone = step.checks && !stops ? await keepEachChecksOwn(input, ctx, tree, step, index, judged.stepRun.run, passing, flaky) : null;
      const failure = judged.failure ?? alone;
      if (!failure) continue;
      firstFailure ??= failure;
      if (stops || !input.allSteps || failure.reason === 'gate-timeout') return finish(firstFailure);
    }
    if (firstFailure) return finish(firstFailure);
    if (input.holdout) {
      const hidden = await runHoldout(ctx, tree, input.holdout);
      hiddenLog = hidden.log;
      hiddenMs = hidden.ms;
      return finish(hidden.failure);
    }
    return finish(null);
  } finally {
    await tree.dispose().catch(() => undefined);
    await ctx.canaries.dispose().catch(() => undefined);
  }
}

/**
 * Stores each check's own passing tests from a run of checks together (see check-owners.ts):
 * those its files alone define. The checks whose tests the run cannot tell apart run alone after
 * it, judged as any check is, and their own runs are their baselines. Returns the first failure
 * of those runs, or null.
 */
async function keepEachChecksOwn(
  input: GateRunInput,
  ctx: StepContext,
  tree: GateTree,
  step: GateStep,
  index: number,
  run: TestRun | null,
  passing: TestBaseline,
  flaky: string[],
): Promise<(StepFailure & { signature: string }) | null> {
  const checks = step.checks ?? [];
  const files = await readCheckFiles(input.repo, input.tree, baselineKeys(step));
  const owners = ownersOfTests(run ? passingNames(run) : [], files.checks, files.tree);
  Object.assign(passing, owners.owned);
  let failure: (StepFailure & { signature: string }) | null = null;
  for (const check of checks.filter((c) => owners.runAlone.includes(c.command))) {
    const alone = { name: `check:${check.id}`, command: check.command, why: CHECK_ALONE_WHY };
    const judged = await runJudged(input, ctx, tree, alone, index, flaky);
    passing[check.command] = judged.stepRun.run ? passingNames(judged.stepRun.run) : [];
    failure ??= judged.failure;
    if (failure && !input.allSteps) break;
  }
  return failure;
}

/** How many times its first time a gate whose time was cut to the suite's own gets on its run again. */
const CUT_GATE_TIME_FACTOR = 2;

/** One step, run again when it may be flaky, judged; a failure carries its signature. */
async function runJudged(
  input: GateRunInput,
  ctx: StepContext,
  tree: GateTree,
  step: GateStep,
  index: number,
  flaky: string[],
): Promise<{ stepRun: StepRun; failure: (StepFailure & { signature: string }) | null }> {
  const options = { ratchet: input.ratchet, basePassing: input.baseline ? passingUnder(input.baseline, baselineKeys(step)) : undefined };
  let stepRun = await runStep(ctx, tree, step);
  let failure = judgeStep(ctx, step, stepRun, options);
  // A step that ran out of the gate's time while it was still printing (a suite slowed by a loaded
  // machine) runs once more with more CPUs and the gate's whole time anew (the steps after it get
  // that time too): a slow machine costs no verdict. One that printed nothing at all hangs from its
  // start, and is not run again, except in a gate whose time was cut (onlyTimeouts).
  const gateTimedOut =
    failure?.reason === 'gate-timeout' && input.flaky !== undefined && (input.flaky.onlyTimeouts === true || stepRun.result.output.trim() !== '');
  const timeAgainSec = ctx.manifest.verify.timeoutSec * (input.flaky?.onlyTimeouts ? CUT_GATE_TIME_FACTOR : 1);
  if (gateTimedOut) ctx.deadline = Date.now() + timeAgainSec * 1000;
  // Tests that only ran out of their own time are run again with more CPUs and the runners' own
  // limits raised (bubblewrap enforces no CPU limit, so there the raised limits are what helps).
  const timedOut = onlyTimedOut(stepRun.report);
  if ((failure?.rerun || gateTimedOut) && input.flaky && (!input.flaky.onlyTimeouts || timedOut || gateTimedOut)) {
    const again = timedOut || gateTimedOut ? { ...ctx, manifest: withMoreCpus(ctx.manifest) } : ctx;
    const canaries = timedOut ? ctx.canaries : undefined;
    const note = gateTimedOut
      ? ` (run again with ${again.manifest.verify.limits.cpus} CPUs and ${timeAgainSec}s anew${GATE_TIMEOUT_NOTE}`
      : timedOut
        ? ` (run again with ${again.manifest.verify.limits.cpus} CPUs${canaries ? ` and ${TEST_TIMEOUT_FACTOR}× the runner's per-test limits` : ''}${PER_TEST_TIMEOUTS_NOTE}`
        : ' (run again)';
    const raised = (run: () => Promise<StepRun>) => (canaries ? canaries.withTestTimeoutsRaised(TEST_TIMEOUT_FACTOR, run) : run());
    const first = failure;
    const named = failure?.rerun ? failedTestNames(stepRun.run) : null;
    stepRun = await runAgain(again, tree, step, stepRun, note, raised);
    failure = judgeStep(ctx, step, stepRun, options);
    // Flaky means the tests that failed were seen to pass: a run again that exits 0 without
    // reporting them passing leaves the first failure standing.
    if (!failure && first && named && !passesAll(stepRun.run, named)) {
      const listed = named.slice(0, 5).join(', ') + (named.length > 5 ? ', …' : '');
      failure = { ...first, message: `${first.message}; its run again did not report ${named.length === 1 ? 'it' : 'them'} passing (${listed})`, rerun: false };
    }
    if (failure && gateTimedOut && failure.reason === 'gate-timeout')
      failure = { ...failure, message: `${failure.message} twice, the second time with more CPUs` };
    if (!failure) flaky.push(step.name);
    else if (
      failure.rerun &&
      input.flaky.base &&
      step.name !== input.flaky.ownCheck &&
      (await failsOnBase(input, ctx, step, index, stepRun, input.flaky.base))
    ) {
      const message = `${step.name} fails on the base commit too: the accepted head is broken or the test is flaky, not this change`;
      return { stepRun, failure: { reason: 'broken-base', message, rerun: false, signature: `broken-base:${step.name}` } };
    }
  }
  if (!failure) return { stepRun, failure: null };
  const signature = failure.signature ?? failureSignature(`${failure.reason}:${step.name}`, stepRun.report, stepRun.result.output);
  return { stepRun, failure: { ...failure, signature } };
}

/**
 * The hidden tests, after every visible step passed, copied into the run's fresh copy (and
 * read-only there). Their output is a log of their own, their step is marked hidden in the record,
 * and nothing about a failure names a hidden test: the message reaches the next attempt's prompt.
 */
async function runHoldout(
  ctx: StepContext,
  tree: GateTree,
  holdout: { dir: string; command: string },
): Promise<{ failure: (StepFailure & { signature: string }) | null; log: string; ms: number }> {
  const step = { name: HOLDOUT_STEP, command: holdout.command };
  const logs: string[] = [];
  const stepRun = await runStep({ ...ctx, logs }, tree, step, '', holdout.dir);
  const log = logs.join('\n');
  const failure = judgeStep(ctx, step, stepRun, {});
  // What the hidden tests' own run chose (their count, time, exit code, output, which of them
  // failed, whether they ran out of time) would carry their content into a record, a message or
  // a signature every later agent can read: all of those keep only whether they passed, and the
  // hidden log (which no agent sees) the rest.
  const record = ctx.records.at(-1) as GateStepRecord;
  const ms = record.durationMs;
  Object.assign(record, {
    hidden: true,
    exitCode: failure ? 1 : 0,
    timedOut: false,
    oomKilled: false,
    durationMs: 0,
    tests: null,
  });
  if (!failure) return { failure: null, log, ms };
  const why = stepRun.result.timedOut ? 'they ran out of time' : failure.reason === 'no-tests-ran' ? 'they reported no test that ran' : failure.message;
  return {
    failure: { reason: 'holdout-failed', message: 'a hidden acceptance check failed', rerun: false, signature: failureSignature('holdout-failed', null, '') },
    log: `${log}\n[genesis] the hidden acceptance checks failed: ${why}`,
    ms,
  };
}

/**
 * The run again of a failed step: its failed tests alone, by name, when its runner takes a filter
 * and reports them all (the step's run is then the first one with those tests as they came out
 * again); else the whole step, as the verdict rules were written for.
 */
async function runAgain(
  ctx: StepContext,
  tree: GateTree,
  step: GateStep,
  first: StepRun,
  note: string,
  raised: (run: () => Promise<StepRun>) => Promise<StepRun>,
): Promise<StepRun> {
  const names = failedTestNames(first.run);
  const command = names ? commandForTests(step.command, names) : null;
  if (names && command && first.run) {
    const why = `a re-run of ${names.length} failed test${names.length === 1 ? '' : 's'}`;
    const rerun = await raised(() => runStep(ctx, tree, { name: step.name, command, why }, note));
    if (rerun.run && !rerun.problem && reportsAll(rerun.run, names)) {
      const run = withRerun(first.run, rerun.run, names);
      return { ...rerun, run, report: reportOf(run) };
    }
    // A canary the filtered run tripped is judged on that run; a filter that missed a test is not the change's failure.
    if (rerun.problem) return rerun;
  }
  return raised(() => runStep(ctx, tree, { ...step, why: 'a re-run of the whole step' }, note));
}

/**
 * Whether a step that failed twice fails on the base tree too. A failing test that passed on the
 * base by the base's record is the change's failure, with no run; the tests the record does not
 * know run on the base, alone when the runner takes a filter, after setup and build. The base's
 * failure excuses the change only when every test that failed here fails there too; a step whose
 * failures have no names, or a base run that reports none of them, is judged by its exit code.
 */
async function failsOnBase(input: GateRunInput, ctx: StepContext, step: GateStep, index: number, failed: StepRun, base: string): Promise<boolean> {
  const names = failedTestNames(failed.run);
  const record = names && input.flaky?.baseRecord ? await input.flaky.baseRecord() : undefined;
  const known = names ? splitByRecord(names, record ? passingUnder(record, baselineKeys(step)) : undefined) : null;
  if (known && known.passedOnBase.length > 0) {
    const listed = known.passedOnBase.slice(0, 5).join(', ') + (known.passedOnBase.length > 5 ? ', …' : '');
    ctx.logs.push(`[${known.passedOnBase.length} of the failing tests passed on the base by its gate's record, so the base was not asked: ${listed}]\n`);
    return false;
  }
  const asked = known?.unknown ?? null;
  const command = asked ? commandForTests(step.command, asked) : null;
  const tree = await GateTree.export(input.repo, base, `${input.workDir}-base`, input.manifest.protected);
  try {
    const deps = input.manifest.verify.deps
      ? await depsForGate({
          repo: input.repo,
          tree: base,
          manifest: input.manifest,
          sandbox: input.sandbox,
          workDir: tree.layoutDir(),
          cache: input.depsCache,
          image: input.image,
        })
      : null;
    if (deps) ctx.logs.push(deps.log);
    if (deps && !deps.ok) return true;
    const onBase = { ...ctx, mounts: deps?.mounts ?? [] };
    for (const preparing of input.steps.slice(0, index).filter((s) => PREPARING_STEPS.has(s.name))) {
      const { result } = await runStep(onBase, tree, { ...preparing, why: 'to prepare the base' }, ' (on the base)');
      if (result.exitCode !== 0) return true;
    }
    const why = asked && command ? `${asked.length} test${asked.length === 1 ? '' : 's'} on the base` : 'the whole step on the base';
    const onIt = await runStep(onBase, tree, { name: step.name, command: command ?? step.command, why }, ' (on the base)');
    // A base that reports none of them and fails (a file that no longer loads there) tells nothing by name: its exit code decides, as for a step without names.
    return asked && reportsAny(onIt.run, asked) ? allFailOn(onIt.run, asked) : onIt.result.exitCode !== 0;
  } finally {
    await tree.dispose().catch(() => undefined);
  }
}

function gateRecord(sandbox: string, steps: GateStepRecord[], durationMs: number, ok: boolean, flaky: string[], score: number | null): GateRecord {
  const summary = summarizeGate(sandbox, steps) + (flaky.length ? `; flaky: ${flaky.join(', ')}` : '');
  return { ok, sandbox, summary, steps, durationMs, flaky, score };
}

/** The names of a run's individual tests, passed, failed or skipped. */
function reportedNames(run: TestRun): string[] {
  return [...new Set([...namesWith(run, 'passed'), ...namesWith(run, 'failed'), ...namesWith(run, 'skipped')])].sort();
}
