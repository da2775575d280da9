import { checkUsage, EPISODE_USAGE_CAPS } from '../../agents/usage/plausible-usage.js';
import type { AgentUsage } from '../../agents/usage/usage.js';
import { isChargedReason } from '../../errors/rejection-reasons.js';
import { failureSignature } from '../../gate/reports/printed-counts.js';
import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { EpisodeJob, EpisodeResult } from '../episode-job.js';
import type { AgentStep } from './agent.js';
import type { AgentFailure, CollectedChange } from './collect.js';
import type { GateStep } from './gate.js';
import type { Episode } from './state.js';

/** Where the unfinished work of an episode cut short is kept (ledger/prune.ts removes it with its record). */
const QUARANTINE_REF_PREFIX = 'refs/genesis/quarantine/';

/**
 * Writes what the episode did into its record (held in the journal in process, in git for a
 * scheduler elsewhere) with its logs, and says what the result is: whether the gate passed the
 * change at its base; the integrator decides whether it lands.
 */
export async function recordEpisode(episode: Episode, agent: AgentStep, change: CollectedChange, gate: GateStep): Promise<EpisodeResult> {
  const { job, record, deps } = episode;
  const { world, ledger } = deps;
  const { run } = agent;
  const { candidate, failure, changed } = change;
  const { verdict, gated, handedOver } = gate;
  const judged = handedOver ? handedOverResult(job, gated!.commit) : toResult(job, gated?.commit ?? candidate, failure, verdict, run.log);
  const result = { ...judged, ...(gated ? { gatedOn: gated.onto, source: candidate! } : {}) };
  // Work cut short (a timeout, a stopped run) is kept, never on the accepted branch.
  const quarantine = candidate && (failure?.reason === 'agent-timeout' || failure?.reason === 'aborted') ? `${QUARANTINE_REF_PREFIX}${job.episodeId}` : null;
  if (quarantine) await world.setRef(quarantine, candidate!);
  const updated: EpisodeRecord = {
    ...record,
    agent: agent.label,
    ...usageOf(run, record.usage, episode.manifest.agent.limits),
    candidate: gated?.commit ?? candidate,
    ...(gated ? { gatedOn: gated.onto, source: candidate } : {}),
    ...(handedOver ? { handedOver: true } : {}),
    reason: result.reason,
    message: result.message,
    signature: result.signature,
    phases: { ...record.phases, ...episode.phases },
    gate: verdict?.gate ?? null,
    changedFiles: verdict?.changedFiles ?? (changed ? (await world.changes(change.baseTree, change.tree!)).map((c) => c.path) : []),
    quarantine,
    ...(run.egressRefused === undefined ? {} : { egressRefused: run.egressRefused }),
    worker: deps.worker,
  };
  // A second run of the same episode (a job put back after Redis lost it) must not reopen a record the scheduler closed.
  // (In process no job runs twice, and the scheduler closes nothing while its episode runs.)
  if (!deps.hold && (await ledger.read(job.episodeId))?.status === 'final')
    return { ...result, verdict: 'abandoned', reason: 'episode-closed', message: 'the episode was already closed when this run of it ended', signature: null };
  const logs = {
    prompt: episode.prompt,
    agentLog: `${agent.wsDeps ? `${agent.wsDeps.note}\n` : ''}${run.log}${change.handoff ? `${run.log.endsWith('\n') || run.log === '' ? '' : '\n'}${change.handoff}\n` : ''}`,
    diff: await episode.diffing,
    gateLog: verdict?.log ?? '',
    ...(run.transcript === undefined ? {} : { transcript: run.transcript }),
  };
  if (deps.hold) await ledger.hold(updated, logs);
  else await ledger.write(updated, logs);
  return result;
}

/** The usage fields of the record: the checked figures, their source, and every problem with either. */
function usageOf(run: AgentStep['run'], earlier: EpisodeRecord['usage'], limits: { maxCostUsd?: number; maxTokens?: number }) {
  const checked = recordedUsage(run.usage, earlier, limits);
  const wire = wireUsage(run, limits);
  const problems = [...(checked.usageProblems ?? []), ...(wire.usageProblems ?? [])];
  return { ...checked, ...wire, ...(problems.length > 0 ? { usageProblems: problems } : {}) };
}

/**
 * Where the usage came from and, when the gateway measured it, what the agent said it spent: a
 * report that strays from the measurement by more than a percent is flagged, since budgets and
 * statistics read the measured figures and a person may want to know the CLI miscounts.
 */
function wireUsage(
  run: AgentStep['run'],
  limits: { maxCostUsd?: number; maxTokens?: number },
): Pick<EpisodeRecord, 'usageSource' | 'usageReported' | 'modelCalls' | 'usageProblems'> {
  if (run.usageSource !== 'wire') return run.usage ? { usageSource: 'agent' } : {};
  // The report is kept as the agent said it, checked as any report is (never below zero, absurd figures flagged).
  const checked = run.reportedUsage ? recordedUsage(run.reportedUsage, null, limits) : null;
  const reported = checked?.usage ?? null;
  const measured = run.usage;
  const problems: string[] = [...(checked?.usageProblems ?? [])];
  if (reported && measured) {
    for (const field of ['inputTokens', 'outputTokens'] as const) {
      const said = reported[field];
      const seen = measured[field];
      if (said !== null && seen !== null && Math.abs(said - seen) > Math.max(10, seen * 0.01)) {
        problems.push(`the agent reported ${said} ${field === 'inputTokens' ? 'input' : 'output'} tokens; ${seen} were measured on the wire`);
      }
    }
  }
  return {
    usageSource: 'wire',
    usageReported: reported,
    ...(run.modelCalls === undefined ? {} : { modelCalls: run.modelCalls }),
    ...(problems.length > 0 ? { usageProblems: problems } : {}),
  };
}

/** The usage the ledger records: checked (never below zero), with what was wrong with it flagged. */
export function recordedUsage(
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

/** A change whose gate judged a place rebuilt under it: the integration queue's verification on its new place is its gate. */
function handedOverResult(job: EpisodeJob, candidate: string): EpisodeResult {
  return {
    episodeId: job.episodeId,
    task: job.task,
    attempt: job.attempt,
    base: job.base,
    candidate,
    verdict: 'queued',
    reason: null,
    message: 'its gate ran on a tip whose change ahead failed there; the integration queue verifies it on its new place',
    signature: null,
  };
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
