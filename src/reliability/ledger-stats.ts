import { computeEffectiveReliability, computeHorizonSteps } from './deterministic-retries.js';
import { fitHorizon, type HorizonFit, type HorizonPoint } from './horizon-fit.js';
import { assertInteger } from './validate.js';
import { computeWilsonInterval } from './wilson.js';

/** How an episode ended; `abandoned` (stopped before a verdict) counts in time and cost only. */
export type StatsOutcome = 'accepted' | 'rejected' | 'failed' | 'abandoned';

/** The few facts about one episode that the statistics need, whatever the ledger stores besides. */
export interface StatsEpisode {
  id: string;
  task: string;
  /** 1 for a task's first attempt. */
  attempt: number;
  outcome: StatsOutcome;
  /** Why it was rejected or failed (a gate check, an agent exit), if known. */
  reason: string | null;
  /** A fingerprint of the failure (say, the failing test and message), equal when it repeats. */
  signature: string | null;
  /** ISO timestamp; orders attempts of a task that share an attempt number. */
  startedAt: string;
  durationMs: number | null;
  costUsd: number | null;
  /** The task's length in human minutes, for the METR-style fit. */
  humanMinutes: number | null;
}

/** Settings of {@link computeLedgerStats}. */
export interface LedgerStatsOptions {
  /** Success thresholds for the horizons that p implies. @default [0.5, 0.8, 0.95] */
  thresholds?: readonly number[];
  /** Distinct tasks with humanMinutes needed before the METR-style fit is tried. @default 10 */
  minFitTasks?: number;
  /** Bootstrap resamples of the METR-style fit. @default 200 */
  bootstrap?: number;
  /** Seed of that bootstrap. @default 1 */
  seed?: number;
  /** What is left of the world: predict the chance that all of it is accepted. */
  remaining?: { tasks: number; attempts: number };
}

/** A count with the reason it belongs to; a missing reason is reported as `unknown`. */
export interface ReasonCount {
  reason: string;
  count: number;
}

/** A proportion with its Wilson 95% interval; `rate` is null when nothing was counted. */
export interface Proportion {
  count: number;
  of: number;
  rate: number | null;
  low: number;
  high: number;
}

/** What {@link computeLedgerStats} measures. Horizons are Infinity when p = 1, null without data. */
export interface LedgerStats {
  counts: { episodes: number; accepted: number; rejected: number; failed: number; abandoned: number; tasks: number; tasksAccepted: number };
  rejectedByReason: ReasonCount[];
  failedByReason: ReasonCount[];
  /** Acceptance among decided episodes (accepted, rejected or failed) with each attempt number. */
  acceptanceByAttempt: Array<Proportion & { attempt: number }>;
  /** Tasks whose first attempt was rejected or failed and that a later attempt got accepted. */
  retryRecovery: Proportion & { tasks: string[] };
  /** Failed or rejected attempts whose signature came back on the task's next attempt. */
  deterministicFraction: Proportion;
  /** Per-episode success p: accepted among decided episodes. */
  episodeSuccess: Proportion;
  horizons: Array<{ threshold: number; steps: number | null; low: number | null; high: number | null }>;
  /** Totals over every episode (failed ones are part of what an accepted change costs). */
  perAcceptedChange: {
    accepted: number;
    /** Null when any episode's duration is unknown: an unknown is not zero. */
    durationMs: number | null;
    costUsd: number | null;
    knownDurationMs: number;
    knownCostUsd: number;
    episodesWithoutDuration: number;
    episodesWithoutCost: number;
  };
  humanMinutesFit: { fit: HorizonFit | null; reason: string | null };
  /** p_eff from p, the attempts and the measured deterministic fraction, raised to the tasks left. */
  prediction: { tasks: number; attempts: number; deterministic: number; pTask: number; success: number } | null;
}

// Code-unit order, not localeCompare: the same ledger must give the same report on any machine.
const compareText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

const isFailure = (episode: StatsEpisode) => episode.outcome === 'rejected' || episode.outcome === 'failed';

function proportion(count: number, of: number): Proportion {
  return { count, of, rate: of === 0 ? null : count / of, ...computeWilsonInterval(count, of) };
}

function countReasons(episodes: readonly StatsEpisode[]): ReasonCount[] {
  const counts = new Map<string, number>();
  for (const { reason } of episodes) counts.set(reason ?? 'unknown', (counts.get(reason ?? 'unknown') ?? 0) + 1);
  return [...counts].map(([reason, count]) => ({ reason, count })).sort((x, y) => y.count - x.count || compareText(x.reason, y.reason));
}

function groupByTask(episodes: readonly StatsEpisode[]): Map<string, StatsEpisode[]> {
  const tasks = new Map<string, StatsEpisode[]>();
  for (const episode of episodes) {
    const list = tasks.get(episode.task);
    if (list) list.push(episode);
    else tasks.set(episode.task, [episode]);
  }
  for (const list of tasks.values()) {
    list.sort((x, y) => x.attempt - y.attempt || Date.parse(x.startedAt) - Date.parse(y.startedAt));
  }
  return tasks;
}

function measureRecovery(tasks: Map<string, StatsEpisode[]>): LedgerStats['retryRecovery'] {
  const failedFirst = [...tasks].filter(([, list]) => list.some((e) => e.attempt === 1 && isFailure(e)));
  const recovered = failedFirst
    .filter(([, list]) => list.some((e) => e.attempt > 1 && e.outcome === 'accepted'))
    .map(([task]) => task)
    .sort(compareText);
  return { ...proportion(recovered.length, failedFirst.length), tasks: recovered };
}

// A pair counts only when both sides are known: a signed failure followed by a verdict whose
// signature (if it failed) is known too; an abandoned next attempt says nothing.
function measureRepeats(tasks: Map<string, StatsEpisode[]>): Proportion {
  let eligible = 0;
  let repeated = 0;
  for (const list of tasks.values()) {
    list.forEach((episode, i) => {
      const next = list[i + 1];
      if (!isFailure(episode) || episode.signature === null || next === undefined) return;
      if (next.outcome === 'abandoned' || (isFailure(next) && next.signature === null)) return;
      eligible += 1;
      if (isFailure(next) && next.signature === episode.signature) repeated += 1;
    });
  }
  return proportion(repeated, eligible);
}

function sumKnown(values: ReadonlyArray<number | null>): { total: number; unknown: number } {
  let total = 0;
  let unknown = 0;
  for (const value of values) {
    if (value === null) unknown += 1;
    else total += value;
  }
  return { total, unknown };
}

function fitHumanMinutes(decided: readonly StatsEpisode[], options: LedgerStatsOptions): LedgerStats['humanMinutesFit'] {
  const points: HorizonPoint[] = decided
    .filter((e) => e.humanMinutes !== null && e.humanMinutes > 0)
    .map((e) => ({ minutes: e.humanMinutes as number, success: e.outcome === 'accepted', task: e.task }));
  const minTasks = options.minFitTasks ?? 10;
  const tasks = new Set(points.map((point) => point.task)).size;
  const lengths = new Set(points.map((point) => point.minutes)).size;
  const successes = points.filter((point) => point.success).length;
  let reason: string | null = null;
  if (tasks < minTasks) reason = `only ${tasks} task${tasks === 1 ? '' : 's'} with humanMinutes and a verdict; the fit needs ${minTasks}`;
  else if (lengths < 2) reason = 'every task has the same humanMinutes, so success cannot be related to length';
  else if (successes === 0 || successes === points.length)
    reason = `the fit needs both accepted and failed episodes, got ${successes} accepted of ${points.length}`;
  if (reason !== null) return { fit: null, reason };
  return { fit: fitHorizon(points, { bootstrap: options.bootstrap ?? 200, seed: options.seed ?? 1 }), reason: null };
}

/**
 * Measures a world from its episodes: what was accepted and why the rest was not, how acceptance
 * changes with the attempt number, what retries recovered, how often a failure repeats, the
 * per-episode success p and the horizons it implies, what an accepted change costs, and, where
 * tasks carry humanMinutes, a METR-style fit. Pure: the caller reads the ledger.
 */
export function computeLedgerStats(episodes: readonly StatsEpisode[], options: LedgerStatsOptions = {}): LedgerStats {
  for (const episode of episodes) assertInteger(`attempt of episode ${episode.id}`, episode.attempt, 1);
  const of = (outcome: StatsOutcome) => episodes.filter((e) => e.outcome === outcome);
  const [accepted, rejected, failed, abandoned] = [of('accepted'), of('rejected'), of('failed'), of('abandoned')];
  const decided = episodes.filter((e) => e.outcome !== 'abandoned');
  const tasks = groupByTask(episodes);

  const attemptNumbers = [...new Set(decided.map((e) => e.attempt))].sort((x, y) => x - y);
  const acceptanceByAttempt = attemptNumbers.map((attempt) => {
    const at = decided.filter((e) => e.attempt === attempt);
    return { attempt, ...proportion(at.filter((e) => e.outcome === 'accepted').length, at.length) };
  });

  const episodeSuccess = proportion(accepted.length, decided.length);
  const p = episodeSuccess.rate;
  const horizons = (options.thresholds ?? [0.5, 0.8, 0.95]).map((threshold) => ({
    threshold,
    steps: p === null ? null : computeHorizonSteps(p, threshold),
    // A lower p means a shorter horizon, so the interval's ends swap roles.
    low: p === null ? null : computeHorizonSteps(episodeSuccess.low, threshold),
    high: p === null ? null : computeHorizonSteps(episodeSuccess.high, threshold),
  }));

  const duration = sumKnown(episodes.map((e) => e.durationMs));
  const cost = sumKnown(episodes.map((e) => e.costUsd));
  const perAccepted = (sum: { total: number; unknown: number }) => (accepted.length === 0 || sum.unknown > 0 ? null : sum.total / accepted.length);

  const deterministicFraction = measureRepeats(tasks);
  let prediction: LedgerStats['prediction'] = null;
  if (options.remaining !== undefined && p !== null) {
    const { tasks: left, attempts } = options.remaining;
    assertInteger('remaining tasks', left, 0);
    const deterministic = deterministicFraction.rate ?? 0;
    const pTask = computeEffectiveReliability({ p, attempts, deterministic });
    prediction = { tasks: left, attempts, deterministic, pTask, success: pTask ** left };
  }

  return {
    counts: {
      episodes: episodes.length,
      accepted: accepted.length,
      rejected: rejected.length,
      failed: failed.length,
      abandoned: abandoned.length,
      tasks: tasks.size,
      tasksAccepted: [...tasks.values()].filter((list) => list.some((e) => e.outcome === 'accepted')).length,
    },
    rejectedByReason: countReasons(rejected),
    failedByReason: countReasons(failed),
    acceptanceByAttempt,
    retryRecovery: measureRecovery(tasks),
    deterministicFraction,
    episodeSuccess,
    horizons,
    perAcceptedChange: {
      accepted: accepted.length,
      durationMs: perAccepted(duration),
      costUsd: perAccepted(cost),
      knownDurationMs: duration.total,
      knownCostUsd: cost.total,
      episodesWithoutDuration: duration.unknown,
      episodesWithoutCost: cost.unknown,
    },
    humanMinutesFit: fitHumanMinutes(decided, options),
    prediction,
  };
}
