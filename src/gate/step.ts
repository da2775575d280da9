import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import { describeNetworkFailure, GATE_OFFLINE_ENV } from '../deps/offline-env.js';
import type { Sandbox, SandboxMount, SandboxRunResult } from '../sandbox/sandbox.js';
import { removeTree } from '../sandbox/process/remove-tree.js';
import type { GateStepRecord } from '../ledger/episode-record.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { GateStep } from './plan.js';
import { PREPARING_STEPS, type GateTree } from './tree.js';
import { vanishedTests } from './test-baseline.js';
import { namesWith, passingNames, passingNamesEach, reportOf, testsThatRan, type TestRun } from './reports/cases.js';
import type { ReportBudget, ReportProblem } from './reports/files.js';
import { removeReportFiles } from './reports/files.js';
import { readStepReport } from './reports/read-report.js';
import { testsSignature, type TestFailure, type TestReport } from './reports/printed-counts.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';
import { CANARY_DIR, type GateCanaries } from './canary/gate-canaries.js';
import { judgeCanaries } from './canary/judge-canaries.js';
import type { CountsTest } from './counted-tests.js';

/** Where hidden holdout tests are put in the gate's work dir (never in the world). */
export const HOLDOUT_DIR = '.genesis-holdout';

const LOG_PER_STEP = 64 * 1024;
/**
 * Output kept for reading a report: a long TAP stream (thousands of tests) must reach the parser
 * whole; past this its runner's final summary counts. Bounded: a gate that prints a gigabyte must
 * not cost the orchestrator much more than this.
 */
const PARSE_BYTES = 4 * 1024 * 1024;

/** What the gate's steps share: where they run and what they leave for the record. */
export interface StepContext {
  sandbox: Sandbox;
  manifest: WorldManifest;
  deadline: number;
  records: GateStepRecord[];
  logs: string[];
  /** Read-only views every step gets (the dependency set's). */
  mounts: readonly SandboxMount[];
  /** This gate's canaries, loaded into every test process of the steps that are judged by their tests. */
  canaries?: GateCanaries;
  /** What the gate's steps have left to read of report files, together. */
  reportBudget: ReportBudget;
}

/** One run of one step: the sandbox's result and the report read from it. */
export interface StepRun {
  result: SandboxRunResult;
  run: TestRun | null;
  report: TestReport | null;
  problem: ReportProblem | null;
}

/** The reason of a step that exited non-zero, by its kind (`check:<task>` is a check). */
const STEP_FAILED = {
  setup: 'setup-failed',
  build: 'build-failed',
  test: 'test-failed',
  check: 'check-failed',
  holdout: 'holdout-failed',
} as const satisfies Record<string, RejectionReason>;

function stepFailedReason(name: string): RejectionReason {
  const kind = name.split(':')[0] ?? name;
  return Object.hasOwn(STEP_FAILED, kind) ? STEP_FAILED[kind as keyof typeof STEP_FAILED] : 'check-failed';
}

/** A step that failed, and whether running it again could tell a flaky test from a bad change. */
export interface StepFailure {
  reason: RejectionReason;
  message: string;
  rerun: boolean;
  /** A signature of its own, where the failing tests' names are not what tells two failures apart. */
  signature?: string;
}

/**
 * Runs one step in a fresh copy of the tree, protected paths read-only, and reads its report.
 * Report files the tree already held are removed first: only what the step writes is its report.
 */
export async function runStep(ctx: StepContext, tree: GateTree, step: GateStep, note = '', holdout?: string): Promise<StepRun> {
  const workDir = await tree.fresh();
  if (holdout) await copyHoldout(holdout, join(workDir, HOLDOUT_DIR));
  const preparing = PREPARING_STEPS.has(step.name);
  const junit = ctx.manifest.verify.report?.junit ?? null;
  const stale = junit && !preparing ? await removeReportFiles(workDir, junit) : [];
  const canaries = preparing ? undefined : ctx.canaries;
  // Whatever the tree holds there (a file, a link out of the tree) goes: the mount takes its place.
  if (canaries) await removeTree(join(workDir, CANARY_DIR));
  const result = await ctx.sandbox.run({
    command: step.command,
    workDir,
    timeoutMs: Math.max(ctx.deadline - Date.now(), 1),
    limits: ctx.manifest.verify.limits,
    image: ctx.manifest.verify.image,
    maxOutputBytes: PARSE_BYTES,
    // Nothing says "gate" here: code under test must not behave differently when judged.
    env: { ...GATE_OFFLINE_ENV, CI: 'true', ...canaries?.env(ctx.sandbox.kind, workDir) },
    mounts: canaries ? [...ctx.mounts, canaries.mount] : ctx.mounts,
    readOnlyPaths: holdout ? [...tree.readOnlyPaths, HOLDOUT_DIR] : tree.readOnlyPaths,
  });
  const read = preparing
    ? { run: null, source: null }
    : await readStepReport({
        output: result.output,
        truncated: result.truncated,
        workDir,
        junit,
        required: step.name === 'test' || step.name.startsWith('check:'),
        budget: ctx.reportBudget,
      });
  if (preparing && result.exitCode === 0) await tree.keep();
  const judged = canaries && 'run' in read && read.run ? judgeCanaries(read.run, canaries.nonce) : null;
  const run = judged && 'run' in judged ? judged.run : 'run' in read ? read.run : null;
  const problem = judged && 'problem' in judged ? judged.problem : 'problem' in read ? read.problem : null;
  const report = run ? reportOf(run) : null;
  ctx.records.push({
    name: `${step.name}${note}`,
    command: step.command,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    oomKilled: result.oomKilled,
    durationMs: result.durationMs,
    tests: report ? { format: report.format, passed: report.passed, failed: report.failed, skipped: report.skipped } : null,
    why: step.why ?? (preparing ? 'to prepare the tree' : 'the change'),
  });
  const raw = result.output.length > LOG_PER_STEP ? `…${result.output.slice(-LOG_PER_STEP)}` : result.output;
  const tail = canaries ? labelCanaryLines(raw, canaries.nonce) : raw;
  const end = `[exit ${result.exitCode}${result.timedOut ? ', timed out' : ''}${result.oomKilled ? ', out of memory' : ''} after ${(result.durationMs / 1000).toFixed(2)}s]`;
  const notes = [
    ...(stale.length ? [`[removed before the run, not written by it: ${stale.join(', ')}]`] : []),
    ...('source' in read && read.source && run
      ? [`[report: ${read.source}: ${report?.passed} passed, ${report?.failed} failed, ${report?.skipped} skipped]`]
      : []),
    ...(problem ? [`[${problem.reason}: ${problem.message}]`] : []),
    ...(canaries && tail !== raw ? [CANARY_NOTE] : []),
  ];
  ctx.logs.push(`$ ${step.command}   [${step.name}${note}]\n${tail}${tail.endsWith('\n') ? '' : '\n'}${end}\n${notes.map((n) => `${n}\n`).join('')}`);
  return { result, run, report, problem };
}

const CANARY_LABEL = "   [the gate's own check]";
const CANARY_NOTE =
  "[lines marked [the gate's own check] are canaries the gate planted in the test runner, not tests of this world: a must-pass one must pass and a must-fail one must fail, which proves the runner reports both; they count for nothing]";

/** Marks each line of a step's output that names this gate's canaries, so a person reading the log does not take a must-fail for a failure. */
function labelCanaryLines(output: string, nonce: string): string {
  const marker = `genesis-canary ${nonce}`;
  if (!output.includes(marker)) return output;
  return output
    .split('\n')
    .map((line) => (line.includes(marker) ? `${line}${CANARY_LABEL}` : line))
    .join('\n');
}

/**
 * Copies the hidden tests in. Whatever the tree holds at HOLDOUT_DIR (a file, a symlink out of the
 * tree) is removed first, never followed.
 */
async function copyHoldout(from: string, target: string): Promise<void> {
  try {
    await removeTree(target);
    await cp(from, target, { recursive: true, errorOnExist: true, force: false });
  } catch (cause) {
    // No path in the message: it may reach a prompt, and the holdout's host path is a secret too.
    throw new GenesisError(
      'holdout-copy-failed',
      `the hidden tests could not be put into the gate's work dir (${(cause as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'check free disk space and that the holdout directory is readable',
        cause,
      },
    );
  }
}

export interface JudgeOptions {
  /** Ratchet mode's floor for the `test` step's passing tests, and the names they are counted by (all, when null). */
  ratchet?: RatchetRule;
  /** Names that passed on the base for this step's command. */
  basePassing?: readonly string[];
}

/** Why a step's run fails the gate, or null when it passes. Order: limits, report, tests, exit code, vanished tests. */
export function judgeStep(ctx: StepContext, step: GateStep, stepRun: StepRun, options: JudgeOptions): StepFailure | null {
  const { result, run, report, problem } = stepRun;
  if (result.timedOut) return { reason: 'gate-timeout', message: `${step.name} ran out of the gate's ${ctx.manifest.verify.timeoutSec}s`, rerun: false };
  if (result.oomKilled) return { reason: 'gate-oom', message: `${step.name} ran out of memory (${ctx.manifest.verify.limits.memoryMb} MiB)`, rerun: false };
  if (result.diskFull && result.exitCode !== 0)
    return { reason: 'disk-quota', message: `${step.name} filled its disk quota (${ctx.manifest.verify.limits.diskMb} MiB)`, rerun: false };
  if (problem) return { reason: problem.reason, message: `${step.name}: ${problem.message}`, rerun: false };
  const ratchet = options.ratchet && step.name === 'test' ? options.ratchet : undefined;
  const passedByExit = result.exitCode === 0 || ratchet !== undefined;
  if (passedByExit && run && !run.declaredEmpty && !PREPARING_STEPS.has(step.name) && testsThatRan(run) === 0) {
    const files = run.cases.filter((c) => c.fileLevel).length;
    const what = files > 0 ? `only ${files} file-level result${files === 1 ? '' : 's'} (a file that exits before its tests run)` : 'no test case';
    return { reason: 'no-tests-ran', message: `${step.name} reported no individual test that ran: ${what}`, rerun: false };
  }
  if (ratchet) {
    const verdict = judgeRatchet(ratchetScore(run, report, ratchet), ratchet.minScore);
    if (verdict) return { ...verdict, rerun: false };
  } else if (result.exitCode !== 0) {
    const failing = describeFailures(report?.failures ?? []);
    const network = describeNetworkFailure(result.output);
    return {
      reason: stepFailedReason(step.name),
      message: `${step.name} failed (exit ${result.exitCode})${failing ? `: ${failing}` : ''}${network ? `; ${network}` : ''}`,
      rerun: true,
    };
  }
  if (options.basePassing && options.basePassing.length > 0) {
    // Checks run together name a test once for each file that holds it: one that vanished from one file is not hidden by its namesake in another.
    const passed = run ? (step.checks ? passingNamesEach(run) : passingNames(run)) : [];
    const reported = { passed, failed: run ? namesWith(run, 'failed') : [] };
    // A ratchet counts its own names only: one a change brought in and a later one removes was never counted.
    const counts = ratchet?.counts;
    const base = counts ? options.basePassing.filter(counts) : options.basePassing;
    const vanished = vanishedTests(base, reported, ratchet !== undefined);
    if (vanished.length > 0) {
      const names = vanished.slice(0, 5).join(', ') + (vanished.length > 5 ? `, and ${vanished.length - 5} more` : '');
      return {
        reason: 'tests-vanished',
        message: `${step.name}: ${vanished.length} test${vanished.length === 1 ? '' : 's'} that pass on the accepted head ${ratchet ? 'were not reported' : 'were not reported passing'}: ${names}`,
        rerun: false,
        signature: testsSignature(`tests-vanished:${step.name}`, vanished),
      };
    }
  }
  return null;
}

/** The first line of a failure's message, short enough for a rejection that names five of them. */
const FIRST_LINE_LIMIT = 160;

/** The failing tests a rejection names: up to five, each with its message's first line, and how many more. */
export function describeFailures(failures: readonly TestFailure[]): string {
  const named = failures.slice(0, 5).map((f) => {
    const line = (f.message.split('\n')[0] ?? '').trim();
    const first = line.length > FIRST_LINE_LIMIT ? `${line.slice(0, FIRST_LINE_LIMIT)}…` : line;
    return first === '' ? f.name : `${f.name} (${first})`;
  });
  return named.join('; ') + (failures.length > 5 ? `; and ${failures.length - 5} more` : '');
}

/**
 * The ratchet's floor, and which passing tests its score counts (see counted-tests.ts): a test a
 * change registers of its own is not. Null or absent: every passing test counts.
 */
export interface RatchetRule {
  minScore: number;
  counts?: CountsTest | null;
}

/** A test step's ratchet score: its passing tests, those the rule counts when it has one. */
export function ratchetScore(run: TestRun | null, report: TestReport | null, rule: RatchetRule | undefined): number | null {
  if (!report) return null;
  const counts = rule?.counts;
  if (!counts || !run) return report.passed;
  const named = passingNames(run);
  // A run that names no passing test (jest's default reporter) leaves nothing to count by: its runner's count stands.
  if (named.length === 0) return report.passed;
  // Otherwise the names decide, even beside a runner's summary (vitest's, jest's and node's spec
  // reporters always print one; a tail cut from a long log keeps one): a summary counts the tests
  // the code under test registered too. A name reported failing as well is not a pass: the code
  // can register a passing test under the name of a failing one, and a set of names keeps the pass.
  const failed = new Set(namesWith(run, 'failed'));
  return Math.min(report.passed, named.filter((name) => !failed.has(name) && counts(name)).length);
}

/** Ratchet mode's rule: progress may be slow, but it may never go backwards. */
function judgeRatchet(score: number | null, minScore: number): { reason: RejectionReason; message: string; signature: string } | null {
  if (score === null)
    return {
      reason: 'no-score',
      message: 'ratchet mode needs a count of passing tests, and the test step reported none (TAP, node --test, JUnit in the output or in verify.report.junit)',
      signature: 'no-score',
    };
  if (score < minScore)
    return {
      reason: 'score-fell',
      message: `${score} tests pass, fewer than the ${minScore} that pass on the accepted head`,
      signature: `score-fell:${minScore - score}`,
    };
  return null;
}
