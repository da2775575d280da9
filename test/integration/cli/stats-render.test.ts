// Pure rendering of `genesis stats` (no world needed); it sits beside the command's integration
// test because test/unit/cli belongs to another part of the tree.
import { describe, expect, it } from 'vitest';
import { renderStats, toStatsJson, type StatsReport } from '../../../src/cli/commands/stats/report.js';
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
    expect(text).toMatch(/cost \$\d+\.\d{4} \(\$12\.00 in all\)/);
    expect(text).toMatch(/What is left: +12 task\(s\); with 2 attempts each/);
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
});
