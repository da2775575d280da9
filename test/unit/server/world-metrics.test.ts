import { describe, expect, it } from 'vitest';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { buildWorldMetrics, type MetricsInput } from '../../../src/server/projections/world-metrics.js';

function record(id: string, usage: EpisodeRecord['usage'], usageSource?: 'wire' | 'agent'): EpisodeRecord {
  return {
    episodeId: id,
    status: 'final',
    outcome: 'accepted',
    reason: null,
    phases: {},
    usage,
    ...(usageSource ? { usageSource } : {}),
  } as unknown as EpisodeRecord;
}

function metrics(records: EpisodeRecord[]) {
  const input = {
    snapshot: { manifest: { name: 'w' }, records, history: [] },
    board: { counts: { pending: 0, running: 0, blocked: 0, done: 0 } },
    integration: { counts: {}, current: null, run: null },
    probe: () => 'dead',
    cluster: null,
  } as unknown as MetricsInput;
  return buildWorldMetrics(input);
}

describe('the spend metrics', () => {
  it('count each episode once, under where its figures came from: measured on the wire or reported by the agent', () => {
    const families = metrics([
      record('e1', { inputTokens: 100, outputTokens: 10, costUsd: 0.5 }, 'wire'),
      record('e2', { inputTokens: 7, outputTokens: 3, costUsd: 0.25 }, 'agent'),
      // A record written before the gateway existed carries no source: it was the agent's report.
      record('e3', { inputTokens: 1, outputTokens: 1, costUsd: null }),
    ]);
    const samples = (name: string) => {
      const family = families.find((f) => f.name === name);
      if (!family || !('samples' in family)) throw new Error(`no counter ${name}`);
      return family.samples.map((s) => [s.labels, s.value]);
    };
    expect(samples('genesis_tokens_total')).toEqual([
      [{ world: 'w', direction: 'input', source: 'wire' }, 100],
      [{ world: 'w', direction: 'output', source: 'wire' }, 10],
      [{ world: 'w', direction: 'input', source: 'agent' }, 8],
      [{ world: 'w', direction: 'output', source: 'agent' }, 4],
    ]);
    expect(samples('genesis_cost_usd_total')).toEqual([
      [{ world: 'w', source: 'wire' }, 0.5],
      [{ world: 'w', source: 'agent' }, 0.25],
    ]);
    expect(samples('genesis_episodes_without_cost_total')).toEqual([[{ world: 'w' }, 1]]);
  });
});
