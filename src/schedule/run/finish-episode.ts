import type { EpisodeResult } from '../../episode/episode-job.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { Ledger } from '../../ledger/ledger.js';

/**
 * The final record of an episode that ends without joining the integration queue (its agent
 * failed, its gate rejected it, it was stopped). Safe to call twice: a final record is returned as it is.
 */
export async function finishEpisode(ledger: Ledger, result: EpisodeResult, fallback: EpisodeRecord | undefined): Promise<EpisodeRecord> {
  const record = (await ledger.read(result.episodeId)) ?? fallback;
  if (!record) throw new Error(`episode ${result.episodeId} has no ledger record`);
  if (record.status === 'final') return record;
  const final: EpisodeRecord = {
    ...record,
    status: 'final',
    outcome: result.verdict === 'passed' ? 'rejected' : result.verdict,
    reason: result.reason,
    message: result.message,
    signature: result.signature,
    endedAt: new Date().toISOString(),
  };
  await ledger.write(final);
  return final;
}

/**
 * Forged results: a result claiming `passed` counts only when the ledger the worker
 * wrote agrees, for that exact candidate: the record is open, names this candidate and base, and
 * holds a passing gate. Anything else (a result written into Redis by someone other than the
 * worker, naming an old or another candidate) is refused, and nothing lands. Returns why not, or null.
 */
export function forgedResultProblem(record: EpisodeRecord | null, result: EpisodeResult): string | null {
  if (!record) return `episode ${result.episodeId} has no ledger record`;
  if (record.status !== 'running') return `episode ${result.episodeId} is already ${record.outcome}`;
  if (record.candidate === null || record.candidate !== result.candidate)
    return `the result names candidate ${result.candidate?.slice(0, 12) ?? 'none'}, the ledger ${record.candidate?.slice(0, 12) ?? 'none'}`;
  if (record.base !== result.base) return `the result names base ${result.base.slice(0, 12)}, the ledger ${record.base.slice(0, 12)}`;
  if (record.gate?.ok !== true) return 'the ledger holds no passing gate for this candidate';
  return null;
}
