import { spendOf } from '../agents/usage/plausible-usage.js';
import type { EpisodeSummary } from '../ledger/summary.js';

/**
 * What the run policy keeps of the ledger: each task's episodes, and the totals its budgets are
 * held against (episodes, the first start, cost and tokens), kept current as episodes start and
 * end, never recounted. A decision then costs what the tasks still to do have had, not what the
 * world's whole history holds. Pure.
 */
export interface PolicyLedger {
  /**
   * Each task's episodes, oldest first (episode ids sort by start time): those of the tasks
   * changed since the view was made in `recent`, over `base` (never copied: a change copies only
   * `recent`, which holds the tasks of one run).
   */
  readonly base: ReadonlyMap<string, readonly EpisodeSummary[]>;
  readonly recent: ReadonlyMap<string, readonly EpisodeSummary[]>;
  readonly count: number;
  /** When the first episode started (ms), or null. */
  readonly firstStartMs: number | null;
  /** Cost and tokens the agents reported, never below zero (see spendOf). */
  readonly spent: { readonly costUsd: number; readonly tokens: number };
}

const EMPTY: PolicyLedger = { base: new Map(), recent: new Map(), count: 0, firstStartMs: null, spent: { costUsd: 0, tokens: 0 } };

/** The policy's view of these records. */
export function policyLedgerOf(records: Iterable<EpisodeSummary>): PolicyLedger {
  const byTask = new Map<string, EpisodeSummary[]>();
  let count = 0;
  let first = Infinity;
  let costUsd = 0;
  let tokens = 0;
  for (const r of records) {
    const list = byTask.get(r.task);
    if (list) list.push(r);
    else byTask.set(r.task, [r]);
    count++;
    const started = Date.parse(r.startedAt);
    if (Number.isFinite(started)) first = Math.min(first, started);
    const spent = spendOf(r.usage);
    costUsd += spent.costUsd;
    tokens += spent.tokens;
  }
  for (const list of byTask.values()) list.sort(byId);
  return count === 0 ? EMPTY : { base: byTask, recent: new Map(), count, firstStartMs: Number.isFinite(first) ? first : null, spent: { costUsd, tokens } };
}

/** The view with `record` added, or put in the place of the earlier record of the same episode. */
export function withRecord(ledger: PolicyLedger, record: EpisodeSummary): PolicyLedger {
  const list = episodesOfTask(ledger, record.task);
  const at = list.findIndex((r) => r.id === record.id);
  const before = at >= 0 ? spendOf(list[at]!.usage) : { costUsd: 0, tokens: 0 };
  const after = spendOf(record.usage);
  const next = at >= 0 ? list.map((r, i) => (i === at ? record : r)) : [...list, record].sort(byId);
  const started = Date.parse(record.startedAt);
  return {
    base: ledger.base,
    recent: new Map(ledger.recent).set(record.task, next),
    count: ledger.count + (at >= 0 ? 0 : 1),
    firstStartMs: Number.isFinite(started) && (ledger.firstStartMs === null || started < ledger.firstStartMs) ? started : ledger.firstStartMs,
    spent: { costUsd: ledger.spent.costUsd - before.costUsd + after.costUsd, tokens: ledger.spent.tokens - before.tokens + after.tokens },
  };
}

/** The episodes of one task, oldest first. */
export function episodesOfTask(ledger: PolicyLedger, task: string): readonly EpisodeSummary[] {
  return ledger.recent.get(task) ?? ledger.base.get(task) ?? [];
}

/** What one task's episodes spent, over all its attempts (see spendOf). */
export function spentOnTask(ledger: PolicyLedger, task: string): { costUsd: number; tokens: number } {
  const total = { costUsd: 0, tokens: 0 };
  for (const episode of episodesOfTask(ledger, task)) {
    const spent = spendOf(episode.usage);
    total.costUsd += spent.costUsd;
    total.tokens += spent.tokens;
  }
  return total;
}

/** The episodes of these tasks, oldest first per task. */
export function episodesOf(ledger: PolicyLedger, tasks: Iterable<string>): EpisodeSummary[] {
  const out: EpisodeSummary[] = [];
  for (const task of tasks) out.push(...episodesOfTask(ledger, task));
  return out;
}

function byId(a: EpisodeSummary, b: EpisodeSummary): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
