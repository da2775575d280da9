import { trimHandoff } from './trim-handoff.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from '../agents/agent.js';
import { agentForAttempt } from '../agents/rotation.js';
import { checkUsage, EPISODE_USAGE_CAPS } from '../agents/usage/plausible-usage.js';
import type { AgentUsage } from '../agents/usage/usage.js';
import { GenesisError, isGenesisError } from '../errors/genesis-error.js';
import { failureSignature } from '../gate/reports/printed-counts.js';
import { sizeLimitsOf } from '../gate/pre-gate.js';
import { verifyCandidate, type CandidateVerdict } from '../gate/verify-candidate.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { readDoneTasks } from '../world/history/accepted-history.js';
import { readTaskRetries } from '../world/task-retries.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { Ledger } from '../ledger/ledger.js';
import type { WorldRepo } from '../world/world-repo.js';
import { diffText, listChanges } from '../git/tree/diff.js';
import { writeCommit } from '../git/object-writer.js';

export const QUARANTINE_REF_PREFIX = 'refs/genesis/quarantine/';

async function listChangedPaths(repo: string, from: string, to: string): Promise<string[]> {
  return (await listChanges(repo, from, to)).map((c) => c.path);
}
import type { EpisodeJob, EpisodeResult } from './episode-job.js';
import { targetOnTip, type GateTarget, type ReserveTip } from './gate-on-tip.js';
import { isChargedReason, type RejectionReason } from '../errors/rejection-reasons.js';
import { composePrompt } from './prompt.js';
import { linkWorkspaceDeps } from '../deps/workspace-deps.js';
import { collectCandidateTree, createWorkspace, removeWorkspace, type Workspace } from './workspace.js';

export interface EpisodeDeps {
  world: WorldRepo;
  ledger: Ledger;
  sandbox: Sandbox;
  agent: Agent;
  /** Who runs it (host:pid), for the ledger. */
  worker: string;
  /** Aborting it stops the agent; the episode then ends as abandoned. */
  signal?: AbortSignal;
  /** Takes the change's place in the integration queue and says which commit to gate; without it, or null: its base. */
  reserveTip?: ReserveTip;
  /** Called when a phase starts, for progress displays. */
  onPhase?: (job: EpisodeJob, phase: string) => void;
  /** Told what a long wait of the episode is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (job: EpisodeJob, what: string | null) => void;
  /**
   * The scheduler that reads this episode's result runs in this process: the record its gate left is
   * held in the ledger's journal (Ledger.hold) for the one git write that ends the episode. Without
   * it the record is written to git, where a scheduler in another process finds the proof of a
   * passing result (a result in Redis alone could be forged). @default false
   */
  hold?: boolean;
}

/**
 * One episode end to end on a worker: a fresh workspace at the base commit, the agent, the
 * candidate, the gate. The result says whether the gate passed it at its base; the integrator
 * decides whether it lands. The workspace is gone afterwards whatever happened.
 */
export async function runEpisode(job: EpisodeJob, deps: EpisodeDeps): Promise<EpisodeResult> {
  const { world, ledger } = deps;
  const preparing = performance.now();
  const record = await ledger.read(job.episodeId);
  if (!record) throw new GenesisError('episode-unknown', `episode ${job.episodeId} has no ledger record`, { hint: 'episodes are created by genesis run' });
  const manifest = await world.manifestAt(job.base);
  const task = manifest.tasks.find((t) => t.id === job.task);
  if (!task) throw new GenesisError('task-unknown', `task ${job.task} is not in world.yaml at ${job.base.slice(0, 12)}`);
  const phases: Record<string, number> = {};
  const onWait = deps.onWait ? (what: string | null) => deps.onWait!(job, what) : undefined;
  const waits = onWait ? { onWait } : {};
  const timed = async <T>(phase: string, work: () => Promise<T>): Promise<T> => {
    deps.onPhase?.(job, phase);
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      phases[phase] = Math.round(performance.now() - t0);
    }
  };
  // The scheduler names the earlier attempts; reading the whole ledger per episode grows with the world.
  const earlier = job.earlier
    ? (await Promise.all(job.earlier.map((id) => ledger.read(id)))).filter((e): e is EpisodeRecord => e !== null)
    : (await ledger.readAll()).filter((e) => e.task === job.task && e.id !== job.episodeId);
  const lastFailed = earlier.filter((e) => e.outcome === 'rejected' || e.outcome === 'failed').at(-1);
  const lastGateLog = lastFailed ? (await ledger.readArtifacts(lastFailed.id)).gateLog : undefined;
  const retryNote = (await readTaskRetries(world.path)).filter((r) => r.task === job.task).at(-1)?.note ?? null;
  // Checks of the tasks done at the base, not at today's head: the candidate's tree is base + change.
  // The prompt names the same gate plan the gate runs, so the agent is judged only by what it was told.
  const done = await readDoneTasks(world.path, manifest.branch, job.base);
  const prompt = composePrompt({ manifest, task, attempt: job.attempt, earlier, lastGateLog, retryNote, doneTasks: done });
  // The record, the manifest, earlier attempts, done tasks and the prompt: bookkeeping before the workspace.
  phases.prepare = Math.round(performance.now() - preparing);

  let workspace: Workspace | null = null;
  let removing: Promise<boolean> | null = null;
  try {
    workspace = await timed('workspace', () => createWorkspace(world, job.episodeId, job.base));
    const ws = workspace;
    // The base's dependency set, the one its gate mounts, so the agent's own test runs work at once.
    const wsDeps = await timed('deps', () => linkWorkspaceDeps({ repo: world.path, dir: ws.dir, base: job.base, manifest, sandbox: deps.sandbox, ...waits }));
    const promptFile = join(ws.episodeDir, 'prompt.md');
    await writeFile(promptFile, prompt);
    // With agent.rotation, each attempt of a task runs the agent its turn names.
    const agent = agentForAttempt(deps.agent, job.attempt);
    const run = await timed('agent', () =>
      agent.run({
        workspace: ws.dir,
        promptFile,
        prompt,
        env: agentEnv(manifest.agent.env, job, manifest.name, promptFile),
        timeoutMs: manifest.agent.timeoutSec * 1000,
        taskId: job.task,
        attempt: job.attempt,
        signal: deps.signal,
        readOnly: wsDeps?.readOnly ?? [],
      }),
    );
    const baseTree = await world.treeOf(job.base);
    // The handoff file is Genesis's to keep within its limit: the oldest notes go, not the episode's change.
    const handoff = manifest.goal.progressFile ? await trimHandoff(ws.dir, manifest.goal.progressFile, sizeLimitsOf(manifest.verify).maxFileBytes) : null;
    // Over the size limits the workspace is not read at all: rejected as size-limit, with no candidate.
    let oversize: CandidateVerdict | null = null;
    const tree = await timed('collect', () =>
      collectCandidateTree(world, ws, job.base, wsDeps?.exclude, sizeLimitsOf(manifest.verify)).catch((e: unknown) => {
        if (isGenesisError(e) && e.code === 'size-limit') oversize = sizeLimitVerdict(e);
        return isGenesisError(e) ? null : Promise.reject(e);
      }),
    );
    const changed = tree !== null && tree !== baseTree;
    // Work off the episode's path, done while the gate runs (started once the gate's target is known, so
    // it does not delay it): nothing reads the workspace after collect (the gate exports the tree from
    // the object store), and only the ledger reads the diff.
    let diffing: Promise<string> = Promise.resolve('');
    const startAside = () => {
      if (removing !== null) return;
      removing = removeWorkspace(ws);
      if (changed) diffing = diffText(world.path, baseTree, tree!);
      diffing.catch(() => undefined);
    };
    // Written straight into the store: write-tree just made the tree there and the base is the commit checked out (the
    // lookups WorldRepo.commitTree makes first, three round trips to cat-file, would only find them).
    const candidate = changed
      ? await writeCommit(world.path, { tree: tree!, parents: [job.base], message: `candidate of episode ${job.episodeId} (task ${job.task})\n` })
      : null;
    const failure = agentFailure(run, tree, changed, oversize !== null);
    let verdict: CandidateVerdict | null = failure ? null : oversize;
    let gated: GateTarget | null = null;
    if (!failure && !verdict && tree) {
      gated = candidate ? await targetOnTip(world, deps.reserveTip, { episodeId: job.episodeId, task: job.task, candidate, base: job.base }) : null;
      startAside();
      const gateOn = async (target: GateTarget | null): Promise<CandidateVerdict> => {
        const on = target
          ? { head: target.onto, manifest: await world.manifestAt(target.onto), tree: target.tree, from: await world.treeOf(target.onto) }
          : null;
        const gateTask = on?.manifest.tasks.find((t) => t.id === task.id) ?? task;
        const doneOn = on ? await readDoneTasks(world.path, manifest.branch, on.head) : done;
        return verifyCandidate({
          world,
          sandbox: deps.sandbox,
          head: on?.head ?? job.base,
          headManifest: on?.manifest ?? manifest,
          fromTree: on?.from ?? baseTree,
          candidateTree: on?.tree ?? tree,
          task: gateTask,
          doneTasks: doneOn,
          name: job.episodeId,
          baseTree: on?.from ?? baseTree,
          // The tip's own gate (of the change ahead) is likely still running: its baseline is awaited, not learned again.
          ...(on && target?.speculative ? { awaitHeadBaselineMs: on.manifest.verify.timeoutSec * 1000 } : {}),
          ...(on ? { sourceChange: { fromTree: baseTree, tree } } : {}),
          ...waits,
        });
      };
      verdict = await timed('gate', () => gateOn(gated));
      // A failure on a tip that holds changes this one did not start from is not yet this change's
      // fault: a change ahead (perhaps not judged yet) may have caused it, by failing its own check,
      // eating the gate's time or breaking the tip outright. As a merge queue charges a failure only
      // once everything ahead passed, the change is judged again on its own base, as if it had no
      // place yet, and joins the queue after; a change that fails there too fails on its own.
      if (gated && !verdict.ok && gated.onto !== job.base) {
        const onTip = { head: gated.onto, verdict };
        gated = null;
        const onBase = await timed('gate-on-base', () => gateOn(null));
        // Both gates are evidence (the tip's may have installed the dependency set the base's then found ready).
        verdict = { ...onBase, log: bothGateLogs(onTip, { head: job.base, verdict: onBase }) };
      }
    }
    startAside();
    const result = { ...toResult(job, gated?.commit ?? candidate, failure, verdict, run.log), ...(gated ? { gatedOn: gated.onto, source: candidate! } : {}) };
    // Work cut short (a timeout, a stopped run) is kept, never on the accepted branch.
    const quarantine = candidate && (failure?.reason === 'agent-timeout' || failure?.reason === 'aborted') ? `${QUARANTINE_REF_PREFIX}${job.episodeId}` : null;
    if (quarantine) await world.setRef(quarantine, candidate!);
    const updated: EpisodeRecord = {
      ...record,
      agent: agent.label,
      ...recordedUsage(run.usage, record.usage, manifest.agent.limits),
      candidate: gated?.commit ?? candidate,
      ...(gated ? { gatedOn: gated.onto, source: candidate } : {}),
      reason: result.reason,
      message: result.message,
      signature: result.signature,
      phases: { ...record.phases, ...phases },
      gate: verdict?.gate ?? null,
      changedFiles: verdict?.changedFiles ?? (changed ? await listChangedPaths(world.path, baseTree, tree!) : []),
      quarantine,
      ...(run.egressRefused === undefined ? {} : { egressRefused: run.egressRefused }),
      worker: deps.worker,
    };
    // A second run of the same episode (a job put back after Redis lost it) must not reopen a record the scheduler closed.
    // (In process no job runs twice, and the scheduler closes nothing while its episode runs.)
    if (!deps.hold && (await ledger.read(job.episodeId))?.status === 'final')
      return {
        ...result,
        verdict: 'abandoned',
        reason: 'episode-closed',
        message: 'the episode was already closed when this run of it ended',
        signature: null,
      };
    const logs = {
      prompt,
      agentLog: `${wsDeps ? `${wsDeps.note}\n` : ''}${run.log}${handoff ? `${run.log.endsWith('\n') || run.log === '' ? '' : '\n'}${handoff}\n` : ''}`,
      diff: await diffing,
      gateLog: verdict?.log ?? '',
      ...(run.transcript === undefined ? {} : { transcript: run.transcript }),
    };
    if (deps.hold) await ledger.hold(updated, logs);
    else await ledger.write(updated, logs);
    return result;
  } finally {
    if (workspace) await (removing ?? removeWorkspace(workspace));
  }
}

/** The usage the ledger records: checked (never below zero), with what was wrong with it flagged. */
function recordedUsage(
  reported: AgentUsage | undefined,
  earlier: EpisodeRecord['usage'],
  limits: { maxCostUsd?: number; maxTokens?: number },
): Pick<EpisodeRecord, 'usage' | 'usageProblems'> {
  if (!reported) return { usage: earlier };
  const { usage, problems } = checkUsage(reported, {
    costUsd: limits.maxCostUsd ?? EPISODE_USAGE_CAPS.costUsd,
    tokens: limits.maxTokens ?? EPISODE_USAGE_CAPS.tokens,
  });
  return problems.length > 0 ? { usage, usageProblems: problems } : { usage };
}

interface AgentFailure {
  verdict: 'failed' | 'abandoned';
  reason: RejectionReason;
  message: string;
  holdUntil?: number;
}

/** The verdict on a workspace too large to read (checkWorkspaceSizes), as the pre-gate would give it. */
function sizeLimitVerdict(error: GenesisError): CandidateVerdict {
  const paths = (error as GenesisError & { paths?: string[] }).paths ?? [];
  return {
    ok: false,
    reason: 'size-limit',
    message: error.message,
    signature: failureSignature('size-limit', null, paths.join('\n')),
    gate: null,
    log: `pre-gate: size-limit: ${error.message}\n`,
    changedFiles: paths,
  };
}

function agentFailure(
  run: {
    exitCode: number;
    timedOut: boolean;
    aborted: boolean;
    durationMs: number;
    failure?: { reason: RejectionReason; message: string; holdUntil?: number };
    stderrTail?: string;
  },
  tree: string | null,
  changed: boolean,
  oversize = false,
): AgentFailure | null {
  if (run.aborted) return { verdict: 'abandoned', reason: 'aborted', message: 'the run was stopped while the agent worked' };
  if (run.timedOut)
    return { verdict: 'failed', reason: 'agent-timeout', message: `the agent ran out of its time (${(run.durationMs / 1000).toFixed(0)}s) and was killed` };
  // The agent's own account (a context-length error, a spent turn budget) says more than its exit code.
  // A usage limit or an overloaded model is nobody's failure: abandoned, not charged, tried again later.
  if (run.failure) {
    const { reason, message, holdUntil } = run.failure;
    return { verdict: isChargedReason(reason) ? 'failed' : 'abandoned', reason, message, ...(holdUntil === undefined ? {} : { holdUntil }) };
  }
  // Its last words on stderr ("No such file or directory", "no idea how to do task convert") reach the run's line and the next prompt.
  if (run.exitCode !== 0)
    return {
      verdict: 'failed',
      reason: 'agent-exit',
      message: `the agent exited with code ${run.exitCode}${run.stderrTail ? `; its stderr ended: ${run.stderrTail}` : ''}`,
    };
  if (oversize) return null;
  if (tree === null) return { verdict: 'failed', reason: 'unreadable-change', message: 'the workspace could not be read as a git tree (a nested repository?)' };
  if (!changed) return { verdict: 'failed', reason: 'empty-change', message: 'the agent left no change in the workspace' };
  return null;
}

function toResult(job: EpisodeJob, candidate: string | null, failure: AgentFailure | null, verdict: CandidateVerdict | null, agentLog: string): EpisodeResult {
  const base = { episodeId: job.episodeId, task: job.task, attempt: job.attempt, base: job.base, candidate };
  if (failure) return { ...base, ...failure, signature: failureSignature(failure.reason, null, agentLog.slice(-2000)) };
  // A failure the base has too is not this change's: not charged to the episode's task.
  if (verdict && !verdict.ok && !isChargedReason(verdict.reason))
    return { ...base, verdict: 'abandoned', reason: verdict.reason, message: verdict.message, signature: verdict.signature };
  if (verdict && !verdict.ok) return { ...base, verdict: 'rejected', reason: verdict.reason, message: verdict.message, signature: verdict.signature };
  return { ...base, verdict: 'passed', reason: null, message: verdict?.gate.summary ?? null, signature: null };
}

function agentEnv(allowed: readonly string[], job: EpisodeJob, worldName: string, promptFile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'LANG', 'LC_ALL', 'TERM', 'TZ', ...allowed]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME ??= join(promptFile, '..', 'home');
  return {
    ...env,
    GENESIS_PROMPT_FILE: promptFile,
    GENESIS_TASK_ID: job.task,
    GENESIS_ATTEMPT: String(job.attempt),
    GENESIS_EPISODE_ID: job.episodeId,
    GENESIS_WORLD_NAME: worldName,
  };
}

/** The log of a change gated on a speculative tip, failed there, and judged again on its own base: both gates, each headed by where it ran. */
function bothGateLogs(tip: { head: string; verdict: CandidateVerdict }, base: { head: string; verdict: CandidateVerdict }): string {
  const heading = (what: string, g: { head: string; verdict: CandidateVerdict }) =>
    `=== gate on ${what} ${g.head.slice(0, 12)}: ${g.verdict.ok ? 'passed' : `failed (${g.verdict.reason})`} ===\n`;
  return `${heading('the speculative tip', tip)}${tip.verdict.log}\n${heading("the change's own base", base)}${base.verdict.log}`;
}
