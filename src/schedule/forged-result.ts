import type { EpisodeResult } from '../episode/episode-job.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';

/**
 * Forged results: a result claiming `passed` counts only when the ledger the worker wrote agrees,
 * for that exact candidate: the record is open, names this candidate and base, and holds a passing
 * gate (a `queued` one: the record hands that candidate, gated on that tip, to the queue). Anything else (a result written into Redis by someone other than the worker, naming an old
 * or another candidate) is refused, and nothing lands. Returns why not, or null.
 */
export function forgedResultProblem(record: EpisodeRecord | null, result: EpisodeResult): string | null {
  if (!record) return `episode ${result.episodeId} has no ledger record`;
  if (record.status !== 'running') return `episode ${result.episodeId} is already ${record.outcome}`;
  if (record.candidate === null || record.candidate !== result.candidate)
    return `the result names candidate ${result.candidate?.slice(0, 12) ?? 'none'}, the ledger ${record.candidate?.slice(0, 12) ?? 'none'}`;
  if (record.base !== result.base) return `the result names base ${result.base.slice(0, 12)}, the ledger ${record.base.slice(0, 12)}`;
  if (result.verdict === 'queued') {
    // Its gate failed on a place rebuilt under it: only the queue's verification can land it (see Lander.proof).
    if (record.handedOver !== true || !result.gatedOn || record.gatedOn !== result.gatedOn)
      return 'the ledger does not hand this candidate to the integration queue';
    return null;
  }
  if (record.gate?.ok !== true) return 'the ledger holds no passing gate for this candidate';
  return null;
}
