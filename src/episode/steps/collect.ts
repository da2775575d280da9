import { isChargedReason, type RejectionReason } from '../../errors/rejection-reasons.js';
import { type GenesisError, isGenesisError } from '../../errors/genesis-error.js';
import { sizeLimitsOf } from '../../gate/pre-gate.js';
import { failureSignature } from '../../gate/reports/printed-counts.js';
import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import { trimHandoff } from '../trim-handoff.js';
import { collectCandidateTree, removeWorkspace, type Workspace } from '../workspace.js';
import type { AgentStep } from './agent.js';
import { timed, type Episode } from './state.js';

export interface AgentFailure {
  verdict: 'failed' | 'abandoned';
  reason: RejectionReason;
  message: string;
  holdUntil?: number;
}

/** The change the agent left: its tree (null when unreadable or too large), its candidate commit, or why the agent failed. */
export interface CollectedChange {
  baseTree: string;
  tree: string | null;
  changed: boolean;
  candidate: string | null;
  failure: AgentFailure | null;
  /** The verdict on a workspace over the size limits: it is not read at all, and there is no candidate. */
  oversize: CandidateVerdict | null;
  /** What keeping the handoff file within its limit did (for the agent's log), or null. */
  handoff: string | null;
}

/** Reads the workspace into a tree and writes the candidate commit on the base. */
export async function collectChange(episode: Episode, ws: Workspace, agent: AgentStep): Promise<CollectedChange> {
  const { job, manifest, deps } = episode;
  const { world } = deps;
  const baseTree = await world.treeOf(job.base);
  // The handoff file is Genesis's to keep within its limit: the oldest notes go, not the episode's change.
  const handoff = manifest.goal.progressFile ? await trimHandoff(ws.dir, manifest.goal.progressFile, sizeLimitsOf(manifest.verify).maxFileBytes) : null;
  // Over the size limits the workspace is not read at all: rejected as size-limit, with no candidate.
  let oversize: CandidateVerdict | null = null;
  const tree = await timed(episode, 'collect', () =>
    collectCandidateTree(world, ws, job.base, agent.wsDeps?.exclude, sizeLimitsOf(manifest.verify)).catch((e: unknown) => {
      if (isGenesisError(e) && e.code === 'size-limit') oversize = sizeLimitVerdict(e);
      return isGenesisError(e) ? null : Promise.reject(e);
    }),
  );
  const changed = tree !== null && tree !== baseTree;
  // Written straight into the store: write-tree just made the tree there and the base is the commit checked out (the
  // lookups WorldRepo.commitTree makes first, three round trips to cat-file, would only find them).
  const candidate = changed
    ? await world.writeCommit({ tree: tree!, parents: [job.base], message: `candidate of episode ${job.episodeId} (task ${job.task})\n` })
    : null;
  return { baseTree, tree, changed, candidate, failure: agentFailure(agent.run, tree, changed, oversize !== null), oversize, handoff };
}

/**
 * Work off the episode's path, started once (when the gate's target is known, so it does not delay
 * it): nothing reads the workspace after collect (the gate exports the tree from the object store),
 * and only the ledger reads the diff.
 */
export function setAside(episode: Episode, ws: Workspace, change: CollectedChange): void {
  if (episode.removing !== null) return;
  episode.removing = removeWorkspace(ws);
  if (change.changed) episode.diffing = episode.deps.world.diffText(change.baseTree, change.tree!);
  episode.diffing.catch(() => undefined);
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

function agentFailure(run: AgentStep['run'], tree: string | null, changed: boolean, oversize: boolean): AgentFailure | null {
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
