// Pure rendering of `genesis stats` (no world needed); it sits beside the command's integration
// test because test/unit/cli belongs to another part of the tree.
import { describe, expect, it } from 'vitest';
import { describeCostPerChange, describeTimePerChange, renderStats, toStatsJson, type StatsReport } from '../../../src/cli/commands/stats/report.js';
import { computeLedgerStats, type StatsEpisode } from '../../../src/reliability/index.js';

const NO_SPEND: StatsReport['spend'] = { tasks: [], changes: [] };
const WORLD: StatsReport['world'] = { name: 'w', path: '/w', branch: 'main', head: 'a'.repeat(40), tasks: 24, tasksDone: 12, running: 1, maxAttempts: 2 };

/** 24 tasks from 1 to 512 human minutes; the longer the task, the likelier it fails. */
function episodes(): StatsEpisode[] {
  const list: StatsEpisode[] = [];
  for (let i = 0; i < 24; i += 1) {
    const minutes = 2 ** (i % 10);
    const success = (i * 7) % 10 >= i % 10;
    list.push({
      id: `e${i}`,
      task: `t${i}`,
      attempt: 1,
      outcome: success ? 'accepted' : 'rejected',
      reason: success ? null : 'test-failed',
      signature: success ? null : 'sig',
      startedAt: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
      durationMs: 1000,
      costUsd: 0.5,
      humanMinutes: minutes,
    });
  }
  return list;
}

describe('renderStats', () => {
  const stats = computeLedgerStats(episodes(), { remaining: { tasks: 12, attempts: 2 } });

  it('prints the METR-style fit with its horizons in human minutes when tasks carry humanMinutes', () => {
    expect(stats.humanMinutesFit.fit).not.toBeNull();
    const text = renderStats({ world: WORLD, stats, spend: NO_SPEND });
    expect(text).toMatch(/^METR-style fit over 24 episodes of 24 tasks: P\(success\) = σ\(/m);
    expect(text).toMatch(/^success +horizon \(human minutes\) +95% interval$/m);
  });

  it('names the episodes still running, the cost per accepted change and the chance that the rest lands', () => {
    const text = renderStats({ world: WORLD, stats, spend: NO_SPEND });
    expect(text).toContain('(and 1 still running, not counted)');
    expect(text).toMatch(/cost: \$\d+\.\d{4} per change \(\$12\.00 in all\)\./);
    expect(text).toMatch(/What is left: +12 tasks; with 2 attempts each/);
  });

  it('says there is nothing to measure before the first episode ends', () => {
    const text = renderStats({ world: { ...WORLD, running: 0 }, stats: computeLedgerStats([]), spend: NO_SPEND });
    expect(text).toContain('No finished episodes yet');
  });

  it('writes an infinite horizon as null in JSON', () => {
    const perfect = computeLedgerStats(episodes().map((e) => ({ ...e, outcome: 'accepted' as const })));
    const json = toStatsJson({ world: WORLD, stats: perfect, spend: NO_SPEND }) as { horizons: Array<{ steps: number | null }> };
    expect(json.horizons.map((h) => h.steps)).toEqual([null, null, null]);
  });

  it('says time and cost per change in whole sentences, for each thing that can be missing', () => {
    const m = { accepted: 2, durationMs: 5000, costUsd: null, knownDurationMs: 10_000, knownCostUsd: 0, episodesWithoutDuration: 0, episodesWithoutCost: 3 };
    expect(describeTimePerChange(m, 3)).toBe('time: 5.0 s of episode time per change (10.0 s over 3 episodes).');
    expect(describeCostPerChange(m, 3)).toBe('cost: not known, no episode reported a cost (the agent reports none; see agent.price).');
    const none = { ...m, accepted: 0, durationMs: null, knownDurationMs: 500, episodesWithoutDuration: 0 };
    expect(describeTimePerChange(none, 1)).toBe('time: none yet, no change has been accepted (0.5 s over 1 timed episode).');
    const partly = { ...m, durationMs: null, episodesWithoutDuration: 1, costUsd: null, episodesWithoutCost: 1, knownCostUsd: 0.25 };
    expect(describeTimePerChange(partly, 3)).toBe('time: not known, 1 episode of 3 recorded no duration (10.0 s over 2 timed episodes).');
    expect(describeCostPerChange(partly, 3)).toBe('cost: not known, 1 episode of 3 reported no cost (the 2 episodes that reported one spent $0.25).');
    for (const line of [describeTimePerChange(partly, 3), describeCostPerChange(partly, 3)]) expect(line).not.toMatch(/\(s\)/);
  });
});
