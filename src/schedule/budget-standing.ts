import { type BudgetLift, LIFTABLE, type Liftable, liftedBudgets } from '../ledger/budget-lifts.js';
import type { EpisodeSummary } from '../ledger/summary.js';
import type { WorldManifest } from '../manifest/schema.js';
import { policyLedgerOf } from './policy-ledger.js';

/** One budget of goal.stop: what world.yaml sets, what lifts added, what is in force, and what is spent against it. */
export interface BudgetStanding {
  name: Liftable;
  /** world.yaml's figure. */
  set: number;
  /** The sum of every `genesis budget lift` of it. */
  lifted: number;
  /** What the run holds the world to: set + lifted. */
  limit: number;
  used: number;
  unit: 'episodes' | 'hours' | 'usd' | 'tokens';
  /** True when no further episode may start against it. */
  spent: boolean;
}

const UNITS: Record<Liftable, BudgetStanding['unit']> = { maxEpisodes: 'episodes', maxHours: 'hours', maxCostUsd: 'usd', maxTokens: 'tokens' };

/**
 * Every budget world.yaml sets, as `genesis run` holds the world to it: lifted by every lift and
 * spent as the run's own ledger view counts (every episode started, hours since the first start,
 * the cost and tokens agents reported). The one derivation `genesis budget`, `genesis status` and
 * the dashboard's API print, so none can show a limit the run does not use. Pure.
 */
export function budgetStanding(
  stop: WorldManifest['goal']['stop'],
  lifts: readonly BudgetLift[],
  episodes: Iterable<EpisodeSummary>,
  now: Date,
): BudgetStanding[] {
  const inForce = liftedBudgets(stop, lifts);
  const ledger = policyLedgerOf(episodes);
  const hours = ledger.firstStartMs === null ? 0 : (now.getTime() - ledger.firstStartMs) / 3_600_000;
  const used: Record<Liftable, number> = {
    maxEpisodes: ledger.count,
    maxHours: Math.round(hours * 100) / 100,
    maxCostUsd: Math.round(ledger.spent.costUsd * 10_000) / 10_000,
    maxTokens: ledger.spent.tokens,
  };
  return LIFTABLE.flatMap((name): BudgetStanding[] => {
    const set = stop[name];
    const limit = inForce[name];
    if (set === undefined || limit === undefined) return [];
    return [{ name, set, lifted: limit - set, limit, used: used[name], unit: UNITS[name], spent: used[name] >= limit }];
  });
}
