import type { EpisodeRecord } from './episode-record.js';

/** The fields of a record that what a change costs is measured from. */
export type CostedEpisode = Pick<EpisodeRecord, 'id' | 'task' | 'attempt' | 'status' | 'outcome' | 'startedAt' | 'endedAt' | 'commit' | 'phases' | 'usage'>;

/**
 * What a set of episodes spent. An unknown is not zero: tokens and cost sum what the agents
 * reported, and say how many episodes reported nothing (null when none reported anything).
 */
export interface Spend {
  episodes: number;
  /** Input plus output tokens, over the episodes that reported them. */
  tokens: number | null;
  episodesWithoutTokens: number;
  costUsd: number | null;
  episodesWithoutCost: number;
  /** Milliseconds in the agent phase. */
  agentMs: number;
  /** Milliseconds in the episodes' gates (on the tip and, when it failed there, on the base). */
  gateMs: number;
}

/** One accepted change: the episodes its task spent from the last change of that task (or its start) up to the one that landed. */
export interface ChangeCost extends Spend {
  task: string;
  episode: string;
  commit: string;
  attempt: number;
  firstStartedAt: string;
  landedAt: string | null;
  /** From the start of the first of those episodes to the landing. */
  toLandingMs: number | null;
}

/** Everything a task spent, landed or not. */
export interface TaskCost extends Spend {
  task: string;
  /** Accepted changes of the task (a task lands once, unless it is retried after an amend). */
  landed: number;
  /** From its first episode's start to its first landing; null while it has not landed. */
  toLandingMs: number | null;
}

/** Per task and per accepted change, in the order of the tasks' and changes' first episodes. */
export interface ChangeCosts {
  tasks: TaskCost[];
  changes: ChangeCost[];
}

/**
 * Measures what each accepted change and each task cost: episodes, tokens, cost, agent and gate
 * time, and time to landing. Records still running count (they spend too) except in the time to
 * landing. Pure: the caller reads the ledger.
 */
export function measureChangeCosts(records: readonly CostedEpisode[]): ChangeCosts {
  const byTask = new Map<string, CostedEpisode[]>();
  for (const r of [...records].sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt) || x.attempt - y.attempt)) {
    const list = byTask.get(r.task);
    if (list) list.push(r);
    else byTask.set(r.task, [r]);
  }
  const tasks: TaskCost[] = [];
  const changes: ChangeCost[] = [];
  for (const [task, list] of byTask) {
    let since = 0;
    let firstLanding: number | null = null;
    list.forEach((r, i) => {
      if (!isLanded(r)) return;
      const spent = list.slice(since, i + 1);
      const toLandingMs = elapsed(spent[0]!.startedAt, r.endedAt);
      changes.push({
        task,
        episode: r.id,
        commit: r.commit!,
        attempt: r.attempt,
        firstStartedAt: spent[0]!.startedAt,
        landedAt: r.endedAt,
        toLandingMs,
        ...sumSpend(spent),
      });
      if (firstLanding === null) firstLanding = elapsed(list[0]!.startedAt, r.endedAt);
      since = i + 1;
    });
    tasks.push({ task, landed: list.filter(isLanded).length, toLandingMs: firstLanding, ...sumSpend(list) });
  }
  changes.sort((x, y) => Date.parse(x.firstStartedAt) - Date.parse(y.firstStartedAt));
  return { tasks, changes };
}

/** What the episodes spent, summed (see {@link Spend}). */
export function sumSpend(episodes: readonly CostedEpisode[]): Spend {
  let tokens = 0;
  let withoutTokens = 0;
  let cost = 0;
  let withoutCost = 0;
  let agentMs = 0;
  let gateMs = 0;
  for (const e of episodes) {
    const input = e.usage?.inputTokens ?? null;
    const output = e.usage?.outputTokens ?? null;
    if (input === null && output === null) withoutTokens += 1;
    else tokens += (input ?? 0) + (output ?? 0);
    if (e.usage?.costUsd === null || e.usage?.costUsd === undefined) withoutCost += 1;
    else cost += e.usage.costUsd;
    agentMs += e.phases.agent ?? 0;
    gateMs += (e.phases.gate ?? 0) + (e.phases['gate-on-base'] ?? 0);
  }
  return {
    episodes: episodes.length,
    tokens: withoutTokens === episodes.length ? null : tokens,
    episodesWithoutTokens: withoutTokens,
    // Sums of binary fractions drift (0.1 + 0.2); a cent's ten-thousandth is finer than any price.
    costUsd: withoutCost === episodes.length ? null : Math.round(cost * 1e6) / 1e6,
    episodesWithoutCost: withoutCost,
    agentMs,
    gateMs,
  };
}

function isLanded(r: CostedEpisode): boolean {
  return r.status === 'final' && r.outcome === 'accepted' && r.commit !== null;
}

function elapsed(from: string, to: string | null): number | null {
  if (to === null) return null;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? ms : null;
}

/** A cost as the trailer and the tables print it: dollars with enough digits for a cheap episode. */
export function formatCostUsd(costUsd: number): string {
  return costUsd >= 1 ? costUsd.toFixed(2) : costUsd.toFixed(4).replace(/0+$/, '').replace(/\.$/, '.0');
}
