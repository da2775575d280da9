import { mkdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { stoppableSandbox } from '../sandbox/stoppable-sandbox.js';
import type { GateRecord } from '../ledger/episode-record.js';
import { withProtectedFrom } from '../git/tree/export.js';
import { writeHiddenLog } from '../ledger/hidden-logs.js';
import { runScratchName } from '../world/scratch-names.js';
import type { TaskSpec, WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { baselineKeys, planGate, type GateStep } from './plan.js';
import { PREPARING_STEPS } from './tree.js';
import {
  loadBaseline,
  loadScoredNames,
  markBaselineFinal,
  passingUnder,
  saveBaseline,
  saveScoredNames,
  vanishedTests,
  waitForBaseline,
  type TestBaseline,
} from './test-baseline.js';
import { runGate, type GateRunVerdict } from './gate.js';
import { withoutOwnTests } from './own-tests.js';
import { countedTests, type CountsTest } from './counted-tests.js';
import { checkChange, sizeLimitsOf } from './pre-gate.js';
import { failureSignature, testsSignature } from './reports/printed-counts.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

export type CandidateVerdict =
  | { ok: true; gate: GateRecord; log: string; changedFiles: string[] }
  | { ok: false; reason: RejectionReason; message: string; signature: string; gate: GateRecord | null; log: string; changedFiles: string[] };

export interface VerifyCandidateInput {
  world: WorldRepo;
  sandbox: Sandbox;
  /** The accepted head: the manifest, protected files and checks all come from here. */
  head: string;
  headManifest: WorldManifest;
  /** The tree the change is measured against (the episode's base, or the head on a replay). */
  fromTree: string;
  candidateTree: string;
  task: TaskSpec;
  doneTasks: ReadonlySet<string>;
  /** The gate's name: its episode or verification id (its hidden log is kept under it; its scratch dir is this run's own). */
  name: string;
  /** The tree of the accepted head before this change: a failure that happens there too is not the change's. */
  baseTree?: string;
  /**
   * `head` is a speculative tip whose own gate may still be running: rather than
   * learn its baseline with a second run of the tests, run the gate first and then wait up to this
   * long for that gate to store it, judging vanished tests against it afterwards. Same verdict.
   */
  awaitHeadBaselineMs?: number;
  /** The change as the agent made it, when it is judged merged on another tree (a speculative tip): its paths are checked too. */
  sourceChange?: { fromTree: string; tree: string };
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
  /** Run a failure again only when the machine may have made it (see GateRunInput.flaky.onlyTimeouts). @default false */
  rerunOnlyTimeouts?: boolean;
  /**
   * Aborted when the verdict is no longer wanted (the tip it judges will not land): every run is
   * stopped (see stoppableSandbox), and nothing the gate learned is kept as a baseline, since runs
   * killed half-way say nothing of which tests pass on a tree.
   */
  stop?: AbortSignal;
}

/** The whole gate for one candidate: checks on the change itself, a fail-to-pass witness, then the sandboxed run. */
export async function verifyCandidate(given: VerifyCandidateInput): Promise<CandidateVerdict> {
  const input = given.stop ? { ...given, sandbox: stoppableSandbox(given.sandbox, given.stop) } : given;
  // Gates waiting for this tree's baseline (their tip is this tree) take what it stored, or learn
  // the rest themselves, as soon as this gate ends: passed, failed or thrown.
  const ended = () => markBaselineFinal(input.world.scratchDir, input.candidateTree);
  try {
    const verdict = await judgeCandidate(input);
    await ended();
    return verdict;
  } catch (error) {
    await ended().catch(() => undefined);
    throw error;
  }
}

async function judgeCandidate(input: VerifyCandidateInput): Promise<CandidateVerdict> {
  const { world, headManifest: manifest } = input;
  const onTip = await world.changes(input.fromTree, input.candidateTree);
  // On a tip, the agent's own change is checked as well: an edit outside its paths that the tip happens to hold already is still one.
  const own = input.sourceChange ? await world.changes(input.sourceChange.fromTree, input.sourceChange.tree) : [];
  const changes = [...onTip, ...own.filter((c) => !onTip.some((t) => t.path === c.path))];
  const changedFiles = changes.map((c) => c.path);
  const progress = manifest.goal.progressFile ? [normalizeFilePath(manifest.goal.progressFile)] : [];
  const pre = checkChange(changes, {
    protected: [...manifest.protected, ...manifestInputs(manifest, input.task)],
    // The handoff file is every episode's to append to, whatever its task, as one regular file.
    taskPaths: [...input.task.paths, ...progress],
    regularFiles: progress,
    ...sizeLimitsOf(manifest.verify),
  });
  if (!pre.ok) {
    const log = `pre-gate: ${pre.reason}: ${pre.message}\n`;
    return {
      ok: false,
      reason: pre.reason,
      message: pre.message,
      signature: failureSignature(pre.reason, null, pre.paths.join('\n')),
      gate: null,
      log,
      changedFiles,
    };
  }
  if (input.task.kind === 'planner') {
    const problem = await checkPlan(world, manifest, input.candidateTree);
    if (problem)
      return {
        ok: false,
        reason: 'invalid-plan',
        message: problem,
        signature: failureSignature('invalid-plan', null, problem),
        gate: null,
        log: `pre-gate: invalid-plan: ${problem}\n`,
        changedFiles,
      };
  }
  // This run's own: a second run of the same episode gating at the same time must not share (and remove) it.
  const scratch = join(world.scratchDir, 'gates', runScratchName(input.name));
  await mkdir(join(world.scratchDir, 'gates'), { recursive: true });
  if (input.task.witness && input.task.check) {
    const witness = await runGate({
      repo: world.path,
      tree: input.fromTree,
      steps: planGate(manifest, null, new Set())
        .filter((s) => s.name !== 'test')
        .concat({ name: `check:${input.task.id}`, command: input.task.check }),
      manifest,
      sandbox: input.sandbox,
      workDir: `${scratch}-witness`,
    });
    if (witness.ok) {
      const message = `the task's check already passes without the change, so it witnesses nothing (witness: true asks for a check that fails first)`;
      return { ok: false, reason: 'no-witness', message, signature: 'no-witness', gate: witness.record, log: witness.log, changedFiles };
    }
  }
  const tree = await withProtectedFrom(world.path, input.candidateTree, input.head, manifest.protected, `${scratch}.index`);
  await rm(`${scratch}.index`, { force: true });
  const steps = planGate(manifest, input.task, input.doneTasks);
  const deferred = input.awaitHeadBaselineMs !== undefined ? await baselineToAwait(input, steps) : null;
  // Tests in files the change may edit and did are its own to rename or remove: only the others must not vanish.
  const owned = { repo: world.path, head: input.head, changes, protectedPaths: [...manifest.protected, ...manifestInputs(manifest, input.task)] };
  const baseline = await withoutOwnTests(deferred ? deferred.known : await headBaseline(input, steps, `${scratch}-head`), owned);
  const ratchet = manifest.verify.mode === 'ratchet';
  const scored = ratchet ? await loadScoredNames(world.scratchDir, await world.treeOf(input.head)) : null;
  const counts = ratchet ? await countedTests(world.path, input.head, scored, manifest.protected) : null;
  const ran = await runGate({
    repo: world.path,
    tree,
    steps,
    baseline,
    manifest,
    sandbox: input.sandbox,
    workDir: scratch,
    ...(input.onWait ? { onWait: input.onWait } : {}),
    flaky: {
      base: input.baseTree ?? null,
      ownCheck: `check:${input.task.id}`,
      ...(input.rerunOnlyTimeouts ? { onlyTimeouts: true } : {}),
      ...(input.baseTree ? { baseRecord: () => loadBaseline(world.scratchDir, input.baseTree!) } : {}),
    },
    ratchet: ratchet ? { minScore: await world.headScore(manifest.branch, input.head), counts } : undefined,
    holdout: manifest.verify.holdout ? { dir: await holdoutDir(world, manifest.verify.holdout.dir), command: manifest.verify.holdout.command } : undefined,
  });
  const verdict =
    deferred && ran.ok
      ? judgeVanished(ran, steps, await withoutOwnTests(await awaitedBaseline(input, steps, deferred.missing, `${scratch}-head`), owned), ratchet, counts)
      : ran;
  // Kept where no workspace reaches, never in the verdict's log (the ledger's gate.log, a prompt).
  if (verdict.hiddenLog !== undefined) await writeHiddenLog(world, input.name, verdict.hiddenLog);
  if (verdict.ok) {
    // This tree is what lands: the gates after it compare with what passed here.
    if (!input.stop?.aborted) await saveBaseline(world.scratchDir, tree, verdict.passing);
    // The names a ratchet counts go on unchanged: only an amendment changes them.
    if (scored) await saveScoredNames(world.scratchDir, tree, scored);
    return { ok: true, gate: verdict.record, log: verdict.log, changedFiles };
  }
  return { ok: false, reason: verdict.reason, message: verdict.message, signature: verdict.signature, gate: verdict.record, log: verdict.log, changedFiles };
}

/**
 * The tests that pass on the accepted head for each command of the plan but the task's own check:
 * stored when that head's own gate passed (or the world's first commit), else learned now by
 * running the missing steps on the head's tree (once per head and command; later gates on the
 * same head read it back).
 */
async function headBaseline(input: VerifyCandidateInput, steps: GateStep[], workDir: string): Promise<TestBaseline> {
  const { world, headManifest: manifest } = input;
  const headTree = await world.treeOf(input.head);
  const known = await loadBaseline(world.scratchDir, headTree);
  // The task's own check is left out: on the head it mostly fails to load (its code is not written
  // yet), and learning that would cost a second run of setup, build and the check for every
  // candidate. no-tests-ran still holds for it.
  const own = `check:${input.task.id}`;
  const missing = steps.filter((s) => !PREPARING_STEPS.has(s.name) && s.name !== own && !baselineKeys(s).every((k) => k in known));
  if (missing.length === 0) return known;
  const preparing = steps.filter((s) => PREPARING_STEPS.has(s.name));
  input.onWait?.(`the tests of ${input.head.slice(0, 12)} run once to learn which pass there (the baseline this gate compares with)`);
  const learned = await runGate({
    repo: world.path,
    tree: headTree,
    steps: [...preparing, ...missing],
    manifest,
    sandbox: input.sandbox,
    workDir,
    allSteps: true,
    ...(input.onWait ? { onWait: input.onWait } : {}),
  }).finally(() => input.onWait?.(null));
  // A head whose gate ran out of time tells nothing reliable; better no comparison than a wrong one.
  if ((learned.ok || learned.reason !== 'gate-timeout') && !input.stop?.aborted) {
    const found = Object.fromEntries(missing.flatMap(baselineKeys).map((k) => [k, learned.passing[k] ?? []]));
    await saveBaseline(world.scratchDir, headTree, found);
    return { ...known, ...found };
  }
  return known;
}

/** The head's stored baseline and the commands it lacks, when some are missing (else null: nothing to wait for). */
async function baselineToAwait(input: VerifyCandidateInput, steps: GateStep[]): Promise<{ known: TestBaseline; missing: GateStep[] } | null> {
  const known = await loadBaseline(input.world.scratchDir, await input.world.treeOf(input.head));
  const own = `check:${input.task.id}`;
  const missing = steps.filter((s) => !PREPARING_STEPS.has(s.name) && s.name !== own && !baselineKeys(s).every((k) => k in known));
  return missing.length === 0 ? null : { known, missing };
}

/** The head's baseline once the gate judging the head stored it, or learned here when it will not. */
async function awaitedBaseline(input: VerifyCandidateInput, steps: GateStep[], missing: GateStep[], workDir: string): Promise<TestBaseline> {
  const headTree = await input.world.treeOf(input.head);
  input.onWait?.(`the test baseline of the tip ${input.head.slice(0, 12)}, which the gate of the change ahead stores when it ends`);
  const stored = await waitForBaseline(input.world.scratchDir, headTree, missing.flatMap(baselineKeys), Date.now() + input.awaitHeadBaselineMs!).finally(() =>
    input.onWait?.(null),
  );
  return stored ?? headBaseline(input, steps, workDir);
}

/** The rule headBaseline feeds to each step, applied after the run: every test passing on the head still passes. */
function judgeVanished(
  ran: Extract<GateRunVerdict, { ok: true }>,
  steps: readonly GateStep[],
  baseline: TestBaseline,
  ratchet: boolean,
  counted: CountsTest | null,
): GateRunVerdict {
  // The plan's steps, not the record's: a merged check's record carries its run's command, the baselines each check's own.
  for (const step of steps) {
    const all = passingUnder(baseline, baselineKeys(step));
    const base = counted && ratchet && step.name === 'test' ? all?.filter(counted) : all;
    if (!base || base.length === 0 || PREPARING_STEPS.has(step.name)) continue;
    const passed = passingUnder(ran.passing, baselineKeys(step)) ?? [];
    const vanished = vanishedTests(base, { passed, failed: [] }, ratchet && step.name === 'test');
    if (vanished.length === 0) continue;
    const names = vanished.slice(0, 5).join(', ') + (vanished.length > 5 ? `, and ${vanished.length - 5} more` : '');
    const message = `${step.name}: ${vanished.length} test${vanished.length === 1 ? '' : 's'} that pass on the accepted head were not reported passing: ${names}`;
    const signature = testsSignature(`tests-vanished:${step.name}`, vanished);
    return {
      ...ran,
      ok: false,
      reason: 'tests-vanished',
      message,
      signature,
      record: { ...ran.record, ok: false, summary: `${ran.record.summary}; ${message}` },
    };
  }
  return ran;
}

/**
 * What the manifest is read from, which no task's `paths` can open up: world.yaml always, and the
 * task files of `tasksDir` for every task but a planner (whose change checkPlan validates). A
 * planner could otherwise add a task whose paths cover `tasks/**`, and that task land a task file
 * that breaks `run` and `audit` on the accepted head.
 */
function manifestInputs(manifest: WorldManifest, task: TaskSpec): string[] {
  const tasksDir = manifest.tasksDir ? normalizeFilePath(manifest.tasksDir) : '';
  return ['world.yaml', ...(tasksDir !== '' && task.kind !== 'planner' ? [tasksDir] : [])];
}

/** A path as git lists it: no leading './', no trailing '/'. */
function normalizeFilePath(path: string): string {
  return path
    .trim()
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
}

/**
 * A planner's change must leave a valid manifest in which every existing task is as it was: it may
 * add tasks, never rewrite or remove the ones that exist (that is the person's call).
 */
async function checkPlan(world: WorldRepo, manifest: WorldManifest, candidateTree: string): Promise<string | null> {
  if (!manifest.tasksDir) return 'this world has no tasksDir, so a planner has nowhere to write its tasks';
  let planned: WorldManifest;
  try {
    planned = await world.manifestAt(candidateTree);
  } catch (error) {
    return `the proposed tasks do not make a valid manifest: ${(error as Error).message}`;
  }
  const after = new Map(planned.tasks.map((t) => [t.id, JSON.stringify(t)]));
  const changed = manifest.tasks.filter((t) => after.get(t.id) !== JSON.stringify(t)).map((t) => t.id);
  if (changed.length > 0) return `a planner may only add tasks; it changed or removed ${changed.join(', ')}`;
  if (planned.tasks.length === manifest.tasks.length) return `the plan adds no task (write { tasks: [...] } to a new file in ${manifest.tasksDir}/)`;
  return null;
}

async function holdoutDir(world: WorldRepo, dir: string): Promise<string> {
  const path = isAbsolute(dir) ? dir : join(world.path, dir);
  if (
    !(await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new GenesisError('holdout-missing', `the holdout directory ${path} does not exist on this machine`, {
      hint: 'create it (hidden tests live outside the repository, next to the world), or fix verify.holdout.dir; a worker needs it at the same path',
    });
  }
  return path;
}
