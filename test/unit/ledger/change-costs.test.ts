import { describe, expect, it } from 'vitest';
import { formatCostUsd, measureChangeCosts, type CostedEpisode } from '../../../src/ledger/change-costs.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const episode = (fields: Partial<CostedEpisode> & Pick<CostedEpisode, 'id' | 'task'>): CostedEpisode => ({
  attempt: 1,
  status: 'final',
  outcome: 'rejected',
  startedAt: at(0),
  endedAt: at(1),
  commit: null,
  phases: { agent: 100, gate: 10 },
  usage: { inputTokens: 1000, outputTokens: 100, costUsd: 0.1 },
  ...fields,
});

describe('what a change costs', () => {
  it('charges an accepted change with every attempt of its task since the last change, and its time from the first attempt', () => {
    const costs = measureChangeCosts([
      episode({ id: 'b1', task: 'b', startedAt: at(5), endedAt: at(9), outcome: 'accepted', commit: 'cb' }),
      episode({
        id: 'a2',
        task: 'a',
        attempt: 2,
        startedAt: at(10),
        endedAt: at(30),
        outcome: 'accepted',
        commit: 'ca',
        phases: { agent: 200, gate: 20, 'gate-on-base': 5 },
      }),
      episode({ id: 'a1', task: 'a', startedAt: at(0), endedAt: at(4), usage: { inputTokens: 10, outputTokens: null, costUsd: 0.2 } }),
    ]);
    expect(costs.changes.map((c) => c.episode)).toEqual(['a2', 'b1']);
    expect(costs.changes[0]).toEqual({
      task: 'a',
      episode: 'a2',
      commit: 'ca',
      attempt: 2,
      firstStartedAt: at(0),
      landedAt: at(30),
      toLandingMs: 30_000,
      episodes: 2,
      tokens: 1110,
      episodesWithoutTokens: 0,
      costUsd: 0.3,
      episodesWithoutCost: 0,
      agentMs: 300,
      gateMs: 35,
    });
    expect(costs.tasks.find((t) => t.task === 'b')).toMatchObject({ episodes: 1, landed: 1, toLandingMs: 4000, costUsd: 0.1 });
  });

  it('never takes an unknown for zero: costs nobody reported are null, partial ones say how many are missing', () => {
    const { tasks } = measureChangeCosts([
      episode({ id: 'a1', task: 'a', usage: null }),
      episode({ id: 'b1', task: 'b', usage: null }),
      episode({ id: 'b2', task: 'b', attempt: 2, startedAt: at(2), usage: { inputTokens: 5, outputTokens: 5, costUsd: 0.25 } }),
    ]);
    expect(tasks.find((t) => t.task === 'a')).toMatchObject({ tokens: null, costUsd: null, episodesWithoutCost: 1, landed: 0, toLandingMs: null });
    expect(tasks.find((t) => t.task === 'b')).toMatchObject({ tokens: 10, episodesWithoutTokens: 1, costUsd: 0.25, episodesWithoutCost: 1 });
  });

  it('starts a second change of a task after the first one, and counts running episodes only in what was spent', () => {
    const { changes, tasks } = measureChangeCosts([
      episode({ id: 'a1', task: 'a', outcome: 'accepted', commit: 'c1' }),
      episode({ id: 'a2', task: 'a', startedAt: at(3) }),
      episode({ id: 'a3', task: 'a', startedAt: at(6), endedAt: at(8), outcome: 'accepted', commit: 'c2' }),
      episode({ id: 'a4', task: 'a', startedAt: at(9), status: 'running', outcome: null, endedAt: null }),
    ]);
    expect(changes.map((c) => [c.episode, c.episodes, c.toLandingMs])).toEqual([
      ['a1', 1, 1000],
      ['a3', 2, 5000],
    ]);
    expect(tasks[0]).toMatchObject({ episodes: 4, landed: 2, toLandingMs: 1000 });
  });

  it('prints a cost with the digits a cheap episode needs', () => {
    expect([formatCostUsd(0.001099), formatCostUsd(0.1), formatCostUsd(12.345), formatCostUsd(0)]).toEqual(['0.0011', '0.1', '12.35', '0.0']);
  });
});
