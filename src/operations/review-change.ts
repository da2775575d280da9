import { GenesisError } from '../errors/genesis-error.js';
import type { EpisodeArtifacts, EpisodeRecord } from '../ledger/episode-record.js';
import { ledgerOf } from '../ledger/git-ledger.js';
import type { ReviewDecision } from '../world/review-decisions.js';
import type { WorldRepo } from '../world/world-repo.js';

/** The longest note a decision keeps: it goes into a prompt, so it is a hint, not a log. */
export const MAX_REVIEW_NOTE = 4000;

/** A change that passed its gate and waits for a person, with what they decide on. */
export interface PendingReview {
  id: string;
  task: string;
  attempt: number;
  agent: string;
  base: string;
  candidate: string;
  changedFiles: string[];
  gate: string | null;
  /** When it started waiting (its gate's end). */
  since: string | null;
  /** A decision already taken that a run has not acted on yet. */
  decided: ReviewDecision | null;
}

/** The changes of the world that wait for review (and those decided that no run has landed or closed yet), oldest first. */
export async function listReviews(world: WorldRepo): Promise<PendingReview[]> {
  const ledger = ledgerOf(world);
  const decisions = await world.reviewDecisions();
  const waiting = (await ledger.readSummaries()).filter((s) => s.status === 'running' && s.outcome === 'awaiting-review');
  const out: PendingReview[] = [];
  for (const s of waiting) {
    const r = await ledger.read(s.id);
    if (r) out.push(pendingOf(r, decisions.get(r.id) ?? null));
  }
  return out;
}

/** One change waiting for review, with its diff and gate log (the dashboard's review page). */
export async function readReview(world: WorldRepo, episode: string): Promise<PendingReview & Pick<EpisodeArtifacts, 'diff' | 'gateLog'>> {
  const record = await awaiting(world, episode);
  const artifacts = await ledgerOf(world).readArtifacts(record.id);
  const decided = (await world.reviewDecisions()).get(record.id) ?? null;
  return { ...pendingOf(record, decided), diff: artifacts.diff, gateLog: artifacts.gateLog };
}

/**
 * A person's decision on a change waiting for review: recorded in the world (see
 * writeReviewDecision), carried out by the run in progress at its next step, or by the next run.
 * An approved change lands through the integration queue (verified again on the accepted head if
 * it moved since its gate); a rejected one is closed as rejected, its note in the next attempt's prompt.
 */
export async function decideReview(
  world: WorldRepo,
  input: { episode: string; decision: 'approve' | 'reject'; note?: string | null; by?: string | null },
): Promise<ReviewDecision> {
  const note = input.note?.trim() ?? '';
  if (note.length > MAX_REVIEW_NOTE) {
    throw new GenesisError('invalid-argument', `the note has ${note.length} characters; at most ${MAX_REVIEW_NOTE} are kept`, {
      hint: 'shorten the note: it goes into the next prompt',
    });
  }
  const record = await awaiting(world, input.episode);
  const decision = await world.writeReviewDecision({ episode: record.id, decision: input.decision, note, by: input.by ?? null });
  if (!decision) throw decidedError(record.id, (await world.reviewDecisions()).get(record.id));
  return decision;
}

async function awaiting(world: WorldRepo, episode: string): Promise<EpisodeRecord> {
  const ledger = ledgerOf(world);
  const summaries = await ledger.readSummaries();
  const ids = summaries.map((s) => s.id).filter((id) => id === episode || id.startsWith(episode));
  const exact = ids.includes(episode) ? [episode] : ids;
  if (exact.length > 1)
    throw new GenesisError('ambiguous-episode', `"${episode}" starts ${exact.length} episode ids`, {
      hint: 'give more of the id (genesis review ls lists them)',
    });
  const record = exact[0] ? await ledger.read(exact[0]) : null;
  if (!record)
    throw new GenesisError('episode-not-found', `no episode "${episode}" in the ledger`, { hint: 'genesis review ls lists the changes waiting for review' });
  if (record.status !== 'running' || record.outcome !== 'awaiting-review') {
    const decided = (await world.reviewDecisions()).get(record.id);
    if (decided) throw decidedError(record.id, decided);
    throw new GenesisError('review-not-awaiting', `episode ${record.id} does not wait for review (it is ${record.outcome ?? record.status})`, {
      hint: 'genesis review ls lists the changes waiting for review',
    });
  }
  return record;
}

function decidedError(id: string, decision: ReviewDecision | undefined): GenesisError {
  const what = decision
    ? `${decision.decision === 'approve' ? 'approved' : 'rejected'}${decision.by ? ` by ${decision.by}` : ''} at ${decision.at}`
    : 'decided';
  return new GenesisError('review-decided', `episode ${id} was already ${what}`, {
    hint: 'a decision is final; a rejected task gets a new attempt from the next run',
  });
}

function pendingOf(r: EpisodeRecord, decided: ReviewDecision | null): PendingReview {
  return {
    id: r.id,
    task: r.task,
    attempt: r.attempt,
    agent: r.agent,
    base: r.gatedOn ?? r.base,
    candidate: r.candidate!,
    changedFiles: r.changedFiles,
    gate: r.gate?.summary ?? null,
    since: r.endedAt,
    decided,
  };
}
