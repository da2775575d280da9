import { computeEffectiveReliability, computeLedgerStats, type LedgerStats, type StatsEpisode, type StatsOutcome } from '../../reliability/index.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { TaskSpec } from '../../manifest/schema.js';
import { computeAcceptanceOverTime, type AcceptanceOverTime } from './acceptance-over-time.js';
import { computeChainSuccess, type ChainSuccess } from './chain-success.js';

/** The reliability page: the ledger's statistics, acceptance over time and the chain chart. */
export interface ReliabilityReport {
  stats: LedgerStats;
  acceptanceOverTime: AcceptanceOverTime;
  /** Null until at least one episode was decided (there is no p to draw from). */
  chain: ChainSuccess | null;
}

/**
 * The facts `computeLedgerStats` needs from each finished record. Episodes still running have no
 * outcome yet and are left out; each episode's task supplies its humanMinutes.
 */
export function toStatsEpisodes(records: readonly EpisodeRecord[], tasks: readonly TaskSpec[]): StatsEpisode[] {
  const minutes = new Map(tasks.map((t) => [t.id, t.humanMinutes ?? null]));
  return records.flatMap((r): StatsEpisode[] =>
    r.status === 'final' && r.outcome && r.outcome !== 'awaiting-review'
      ? [
          {
            id: r.id,
            task: r.task,
            attempt: r.attempt,
            // An outrun racer is nobody's failure, as an abandoned episode.
            outcome: (r.outcome === 'outrun' ? 'abandoned' : r.outcome) satisfies StatsOutcome,
            reason: r.reason,
            signature: r.signature,
            startedAt: r.startedAt,
            durationMs: r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null,
            costUsd: r.usage?.costUsd ?? null,
            humanMinutes: minutes.get(r.task) ?? null,
          },
        ]
      : [],
  );
}

/**
 * Measures the world from its ledger. The prediction covers the tasks not yet done, each allowed
 * `retry.maxAttempts` tries, with the measured deterministic fraction.
 */
export function buildReliabilityReport(
  records: readonly EpisodeRecord[],
  tasks: readonly TaskSpec[],
  done: ReadonlySet<string>,
  maxAttempts: number,
): ReliabilityReport {
  const episodes = toStatsEpisodes(records, tasks);
  const remaining = tasks.filter((t) => !done.has(t.id)).length;
  const stats = computeLedgerStats(episodes, { remaining: { tasks: remaining, attempts: maxAttempts } });
  const decided = episodes.filter((e) => e.outcome !== 'abandoned');
  const acceptanceOverTime = computeAcceptanceOverTime(
    decided.map((e) => ({ endedAt: new Date(Date.parse(e.startedAt) + (e.durationMs ?? 0)).toISOString(), accepted: e.outcome === 'accepted' })),
  );
  const p = stats.episodeSuccess.rate;
  let chain: ChainSuccess | null = null;
  if (p !== null) {
    const pTask = computeEffectiveReliability({ p, attempts: maxAttempts, deterministic: stats.deterministicFraction.rate ?? 0 });
    // Ledger order is start order, the order in which the episodes drew their luck.
    chain = computeChainSuccess(
      decided.map((e) => e.outcome === 'accepted'),
      p,
      pTask,
      maxAttempts,
    );
  }
  return { stats, acceptanceOverTime, chain };
}
