import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import type { DepsCache } from '../deps/deps-cache.js';
import { depsForGate } from '../deps/gate-deps.js';
import { describeNetworkFailure, GATE_OFFLINE_ENV } from '../deps/offline-env.js';
import { GenesisError } from '../errors.js';
import type { Sandbox, SandboxMount, SandboxRunResult } from '../sandbox/sandbox.js';
import { discardTree, removeTree } from '../world/remove-tree.js';
import { recordImage, withImageInSummary } from './gate-image.js';
import type { GateRecord, GateStepRecord } from '../world/episode-record.js';
import { exportTree } from '../world/export-tree.js';
import type { WorldManifest } from '../world/manifest-schema.js';
import type { GateStep } from './gate-plan.js';
import { summarizeGate } from './gate-plan.js';
import { HOLDOUT_STEP } from './hidden-checks.js';
import { failureSignature, parseTestOutput, type TestReport } from './test-report.js';

/**
 * `log` holds the visible steps' output; the hidden checks' output is `hiddenLog` alone, so whoever
 * stores a gate log (the ledger, which agents can read) cannot carry it by mistake.
 */
export type GateRunVerdict =
  | { ok: true; record: GateRecord; log: string; hiddenLog?: string }
  | { ok: false; reason: string; message: string; signature: string; record: GateRecord; log: string; hiddenLog?: string };

export interface GateRunInput {
  repo: string;
  tree: string;
  steps: GateStep[];
  manifest: WorldManifest;
  sandbox: Sandbox;
  workDir: string;
  /**
   * Tell flaky tests and a broken base from a bad change: a failing step runs once more on the
   * candidate and, if it fails again and `base` is given and the step is not `ownCheck`, on the
   * base. Omitted, the first failure decides.
   */
  flaky?: { base: string | null; ownCheck: string | null };
  /** Ratchet mode: the `test` step may fail, but its count of passing tests may not fall below this. */
  ratchet?: { minScore: number };
  /** Hidden tests copied into the work dir only after every visible step passed, then run. */
  holdout?: { dir: string; command: string };
  /** Run every step in this image (a name or an id) instead of verify.image: an audit judging again in the image that judged first. */
  image?: string;
  /** Where verify.deps sets are prepared. @default the machine's cache (src/deps) */
  depsCache?: DepsCache;
}

/** Where hidden holdout tests are put in the gate's work dir (never in the world). */
export const HOLDOUT_DIR = '.genesis-holdout';

const LOG_PER_STEP = 64 * 1024;

/**
 * Runs a gate plan on a tree in a fresh sandbox directory: every step in order, sharing one work
 * dir, within one overall time budget; stops at the first failing step. A failure is a verdict,
 * not an exception. The record names the image that judged (by id), and so does its summary, which
 * becomes the accepted commit's Genesis-Verified trailer.
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

async function runGateSteps(input: GateRunInput): Promise<GateRunVerdict> {
  const started = Date.now();
  const deadline = started + input.manifest.verify.timeoutSec * 1000;
  const records: GateStepRecord[] = [];
  const logs: string[] = [];
  const flaky: string[] = [];
  let score: number | null = null;
  let mounts: SandboxMount[] = [];
  const run = (step: GateStep, workDir: string, note = '') => runStep(input, step, workDir, deadline, records, logs, note, mounts);
  await discardTree(input.workDir);
  await exportTree(input.repo, input.tree, input.workDir);
  try {
    const deps = await depsForGate({ repo: input.repo, tree: input.tree, manifest: input.manifest, sandbox: input.sandbox, workDir: input.workDir, cache: input.depsCache, base: input.flaky?.base, image: input.image });
    if (deps) {
      records.push(deps.step);
      logs.push(deps.log);
      if (!deps.ok) return { ok: false, reason: deps.reason, message: deps.message, signature: deps.signature, record: gateRecord(input.sandbox.kind, records, started, false, flaky, score), log: logs.join('\n') };
      mounts = deps.mounts;
    }
    for (const [index, step] of input.steps.entries()) {
      let { result, report } = await run(step, input.workDir);
      if (step.name === 'test') score = report?.passed ?? null;
      if (input.ratchet && step.name === 'test' && !result.timedOut && !result.oomKilled) {
        const verdict = judgeRatchet(score, input.ratchet.minScore);
        if (verdict) return { ok: false, ...verdict, record: gateRecord(input.sandbox.kind, records, started, false, flaky, score), log: logs.join('\n') };
        continue;
      }
      if (result.exitCode === 0) continue;
      if (input.flaky && !result.timedOut && !result.oomKilled) {
        ({ result, report } = await run(step, input.workDir, ' (run again)'));
        if (result.exitCode === 0) {
          flaky.push(step.name);
          continue;
        }
        if (input.flaky.base && step.name !== input.flaky.ownCheck && (await failsOnBase(input, index, input.flaky.base, deadline, records, logs))) {
          const record = gateRecord(input.sandbox.kind, records, started, false, flaky, score);
          const message = `${step.name} fails on the base commit too: the accepted head is broken or the test is flaky, not this change`;
          return { ok: false, reason: 'broken-base', message, signature: `broken-base:${step.name}`, record, log: logs.join('\n') };
        }
      }
      const reason = result.timedOut ? 'gate-timeout' : result.oomKilled ? 'gate-oom' : result.diskFull ? 'disk-quota' : `${step.name.split(':')[0]}-failed`;
      const failing = report?.failures.map((f) => f.name).slice(0, 5).join(', ');
      const network = result.timedOut ? null : describeNetworkFailure(result.output);
      const message = result.timedOut
        ? `${step.name} ran out of the gate's ${input.manifest.verify.timeoutSec}s`
        : `${step.name} failed (exit ${result.exitCode})${failing ? `: ${failing}` : ''}${network ? `; ${network}` : ''}`;
      const record = gateRecord(input.sandbox.kind, records, started, false, flaky, score);
      return { ok: false, reason, message, signature: failureSignature(`${reason}:${step.name}`, report, result.output), record, log: logs.join('\n') };
    }
    if (input.holdout) {
      const hidden = await runHoldout(input, input.holdout, deadline, records, mounts);
      if (hidden.result.exitCode !== 0) {
        // Caught silent error. The message names no hidden test: it reaches the next attempt's prompt.
        const message = hidden.result.timedOut ? 'the hidden acceptance checks ran out of time' : 'a hidden acceptance check failed';
        return { ok: false, reason: 'holdout-failed', message, signature: failureSignature('holdout-failed', parseTestOutput(hidden.result.output), hidden.result.output), record: gateRecord(input.sandbox.kind, records, started, false, flaky, score), log: logs.join('\n'), hiddenLog: hidden.log };
      }
      return { ok: true, record: gateRecord(input.sandbox.kind, records, started, true, flaky, score), log: logs.join('\n'), hiddenLog: hidden.log };
    }
    return { ok: true, record: gateRecord(input.sandbox.kind, records, started, true, flaky, score), log: logs.join('\n') };
  } finally {
    await discardTree(input.workDir);
  }
}

async function runStep(input: GateRunInput, step: GateStep, workDir: string, deadline: number, records: GateStepRecord[], logs: string[], note: string, mounts: readonly SandboxMount[] = []): Promise<{ result: SandboxRunResult; report: TestReport | null }> {
  const result = await input.sandbox.run({
    command: step.command,
    workDir,
    timeoutMs: Math.max(deadline - Date.now(), 1),
    limits: input.manifest.verify.limits,
    image: input.manifest.verify.image,
    maxOutputBytes: LOG_PER_STEP,
    env: { ...GATE_OFFLINE_ENV, CI: 'true', GENESIS_GATE: '1' },
    mounts,
  });
  const report = parseTestOutput(result.output);
  records.push({
    name: `${step.name}${note}`,
    command: step.command,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    oomKilled: result.oomKilled,
    durationMs: result.durationMs,
    tests: report ? { format: report.format, passed: report.passed, failed: report.failed, skipped: report.skipped } : null,
  });
  const end = `[exit ${result.exitCode}${result.timedOut ? ', timed out' : ''}${result.oomKilled ? ', out of memory' : ''} after ${(result.durationMs / 1000).toFixed(2)}s]`;
  logs.push(`$ ${step.command}   [${step.name}${note}]\n${result.output}${result.output.endsWith('\n') ? '' : '\n'}${end}\n`);
  return { result, report };
}

/**
 * Copies the hidden tests in and runs them. Whatever the visible steps left at HOLDOUT_DIR (a
 * file, a symlink out of the tree) is removed first, never followed. Their output goes to a log of
 * its own, and their step is marked hidden in the record.
 */
async function runHoldout(input: GateRunInput, holdout: { dir: string; command: string }, deadline: number, records: GateStepRecord[], mounts: readonly SandboxMount[] = []): Promise<{ result: SandboxRunResult; log: string }> {
  const target = join(input.workDir, HOLDOUT_DIR);
  try {
    await removeTree(target);
    await cp(holdout.dir, target, { recursive: true, errorOnExist: true, force: false });
  } catch (cause) {
    // No path in the message: it may reach a prompt, and the holdout's host path is a secret too.
    throw new GenesisError('holdout-copy-failed', `the hidden tests could not be put into the gate's work dir (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, {
      hint: 'check free disk space and that the holdout directory is readable', cause,
    });
  }
  const logs: string[] = [];
  const { result } = await runStep(input, { name: HOLDOUT_STEP, command: holdout.command }, input.workDir, deadline, records, logs, '', mounts);
  records[records.length - 1]!.hidden = true;
  return { result, log: logs.join('\n') };
}

/** Runs the steps up to and including `index` on the base tree; true when that step fails there too. */
async function failsOnBase(input: GateRunInput, index: number, base: string, deadline: number, records: GateStepRecord[], logs: string[]): Promise<boolean> {
  const workDir = `${input.workDir}-base`;
  await discardTree(workDir);
  await exportTree(input.repo, base, workDir);
  try {
    const deps = await depsForGate({ repo: input.repo, tree: base, manifest: input.manifest, sandbox: input.sandbox, workDir, cache: input.depsCache, image: input.image });
    if (deps) logs.push(deps.log);
    if (deps && !deps.ok) return true;
    for (const step of input.steps.slice(0, index + 1)) {
      const { result } = await runStep(input, step, workDir, deadline, records, logs, ' (on the base)', deps?.mounts);
      if (result.exitCode !== 0) return true;
    }
    return false;
  } finally {
    await discardTree(workDir);
  }
}

function gateRecord(sandbox: string, steps: GateStepRecord[], started: number, ok: boolean, flaky: string[], score: number | null): GateRecord {
  const summary = summarizeGate(sandbox, steps) + (flaky.length ? `; flaky: ${flaky.join(', ')}` : '');
  return { ok, sandbox, summary, steps, durationMs: Date.now() - started, flaky, score };
}

/** Ratchet mode's rule: progress may be slow, but it may never go backwards. */
function judgeRatchet(score: number | null, minScore: number): { reason: string; message: string; signature: string } | null {
  if (score === null) return { reason: 'no-score', message: 'ratchet mode needs a count of passing tests, and the test output had none (TAP, JUnit or node --test)', signature: 'no-score' };
  if (score < minScore) return { reason: 'score-fell', message: `${score} tests pass, fewer than the ${minScore} that pass on the accepted head`, signature: `score-fell:${minScore - score}` };
  return null;
}
