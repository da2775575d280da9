import type { EpisodeRecord } from './episode-record.js';

/** How one agent (and model) did in races: races it ran in, races it won. */
export interface RaceWinsOfAgent {
  /** The agent as the ledger names it (`codex:gpt-5-codex`): the kind or preset, then the model when one is named. */
  agent: string;
  /** The model part of the name, or null when the name carries none. */
  model: string | null;
  raced: number;
  won: number;
}

export interface RaceWins {
  /** Races in the ledger (a task's `race: N`), decided or not. */
  races: number;
  /** Races one racer won: its change landed (or waits for review). */
  decided: number;
  byAgent: RaceWinsOfAgent[];
}

/**
 * Which agents win races, from the ledger: each race (the records naming it) counts once for each
 * agent that ran in it, and is won by the agent whose racer's change landed or waits for review.
 * It says which rotation entry pays when racing: the one that wins most of the races it is in.
 */
export function measureRaceWins(records: readonly Pick<EpisodeRecord, 'race' | 'agent' | 'outcome'>[]): RaceWins {
  const races = new Map<string, Array<Pick<EpisodeRecord, 'agent' | 'outcome'>>>();
  for (const r of records) if (r.race) races.set(r.race, [...(races.get(r.race) ?? []), r]);
  const agents = new Map<string, RaceWinsOfAgent>();
  let decided = 0;
  for (const racers of races.values()) {
    const winner = racers.find((r) => r.outcome === 'accepted' || r.outcome === 'awaiting-review');
    if (winner) decided += 1;
    for (const agent of new Set(racers.map((r) => r.agent))) {
      const seen = agents.get(agent) ?? { agent, model: modelOf(agent), raced: 0, won: 0 };
      seen.raced += 1;
      if (winner?.agent === agent) seen.won += 1;
      agents.set(agent, seen);
    }
  }
  const byAgent = [...agents.values()].sort((a, b) => b.won / b.raced - a.won / a.raced || a.agent.localeCompare(b.agent));
  return { races: races.size, decided, byAgent };
}

/** `codex:gpt-5-codex` → `gpt-5-codex`; a name without a model part (`script`, `claude-code`) → null. */
function modelOf(agent: string): string | null {
  const at = agent.indexOf(':');
  return at < 0 ? null : agent.slice(at + 1);
}
