import { describe, expect, it } from 'vitest';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { buildEpisodeTimeline } from '../../../src/server/projections/episode-timeline.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function record(id: string, worker: string, from: number, to: number | null, phases: Record<string, number>): EpisodeRecord {
  const open = openEpisodeRecord({ id, world: 'w', task: `t-${id}`, attempt: 1, base: 'b', agent: 'script', worker });
  return {
    ...open,
    startedAt: at(from),
    endedAt: to === null ? null : at(to),
    status: to === null ? 'running' : 'final',
    outcome: to === null ? null : 'accepted',
    phases,
  };
}

const shape = (bars: Array<{ phase: string; startMs: number; endMs: number }>) => bars.map((b) => [b.phase, (b.startMs - T0) / 1000, (b.endMs - T0) / 1000]);

describe('the episode timeline', () => {
  it('lays the phases end to end: agent from the start, then the gate, waiting, and integration ending with the episode', () => {
    const r = record('e1', 'h:1', 0, 100, { workspace: 2000, agent: 30_000, collect: 1000, gate: 40_000, integrate: 7000 });
    const [slot] = buildEpisodeTimeline([r], new Date(T0 + 200_000)).slots;
    expect(shape(slot!.episodes[0]!.bars)).toEqual([
      ['agent', 0, 33],
      ['gate', 33, 73],
      ['waiting', 73, 93],
      ['integration', 93, 100],
    ]);
  });

  it('counts the gate on the base to the gate, and clamps phases that overrun the episode', () => {
    const r = record('e1', 'h:1', 0, 10, { agent: 4000, gate: 5000, 'gate-on-base': 5000, integrate: 1000 });
    expect(shape(buildEpisodeTimeline([r], new Date(T0)).slots[0]!.episodes[0]!.bars)).toEqual([
      ['agent', 0, 4],
      ['gate', 4, 10],
    ]);
  });

  it('gives a running episode the phase after the last it recorded, up to now', () => {
    const now = new Date(T0 + 50_000);
    const fresh = record('e1', 'h:1', 0, null, {});
    const gated = record('e2', 'h:2', 0, null, { agent: 10_000, gate: 20_000 });
    const timeline = buildEpisodeTimeline([fresh, gated], now);
    expect(timeline.slots.map((s) => [s.episodes[0]!.worker, shape(s.episodes[0]!.bars), s.episodes[0]!.outcome])).toEqual([
      ['h:1', [['agent', 0, 50]], 'running'],
      [
        'h:2',
        [
          ['agent', 0, 10],
          ['gate', 10, 30],
          ['waiting', 30, 50],
        ],
        'running',
      ],
    ]);
    expect(timeline.toMs).toBe(now.getTime());
  });

  it('puts episodes that overlap on one worker into separate slots and reuses a slot once it is free', () => {
    const records = [
      record('a', 'w1', 0, 10, { agent: 10_000 }),
      record('b', 'w1', 5, 20, { agent: 15_000 }),
      record('c', 'w1', 10, 30, { agent: 20_000 }),
      record('d', 'w0', 0, 5, { agent: 5000 }),
    ];
    const timeline = buildEpisodeTimeline(records, new Date(T0));
    expect(timeline.slots.map((s) => [s.host, s.slot, s.episodes.map((e) => e.id)])).toEqual([
      ['w0', 1, ['d']],
      ['w1', 1, ['a', 'c']],
      ['w1', 2, ['b']],
    ]);
    expect([timeline.fromMs, timeline.toMs]).toEqual([T0, T0 + 30_000]);
  });

  it('draws a row per slot of a machine however often genesis run restarted there, each restart a new process', () => {
    // Three runs with two slots on box, one after another (each restart a new pid), and a fleet worker on other.
    const records = [0, 100, 200].flatMap((t, run) => [
      record(`r${run}a`, `box:${1000 + run}`, t, t + 50, { agent: 50_000 }),
      record(`r${run}b`, `box:${1000 + run}`, t + 5, t + 90, { agent: 85_000 }),
      record(`r${run}c`, `box:${1000 + run}`, t + 55, t + 95, { agent: 40_000 }),
    ]);
    records.push(record('f1', 'other:7:k3x9zq', 10, 20, { agent: 10_000 }));
    const timeline = buildEpisodeTimeline(records, new Date(T0));
    expect(timeline.slots.map((s) => [s.host, s.slot, s.episodes.map((e) => e.id)])).toEqual([
      ['box', 1, ['r0a', 'r0c', 'r1a', 'r1c', 'r2a', 'r2c']],
      ['box', 2, ['r0b', 'r1b', 'r2b']],
      ['other', 1, ['f1']],
    ]);
    // Each bar still says which process ran it.
    expect(timeline.slots[1]!.episodes.map((e) => e.worker)).toEqual(['box:1000', 'box:1001', 'box:1002']);
  });

  it('keeps the most recently started episodes, and is empty without any', () => {
    const records = [record('old', 'w', 0, 1, {}), record('new', 'w', 2, 3, {})];
    expect(buildEpisodeTimeline(records, new Date(T0), 1).slots.flatMap((s) => s.episodes.map((e) => e.id))).toEqual(['new']);
    expect(buildEpisodeTimeline([], new Date(T0))).toEqual({ fromMs: null, toMs: null, slots: [] });
  });
});
