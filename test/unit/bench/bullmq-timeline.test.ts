import { describe, expect, it } from 'vitest';
import type { WorkerLine } from '../../../bench/lib/bullmq-run.js';
import { buildHops, partsOf, summarizeHops, type StampedRunEvent } from '../../../bench/lib/bullmq-timeline.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';

const ev = (at: number, event: RunEvent): StampedRunEvent => ({ at, event });
const entry = (id: string, stage: string) => ({ id, task: id, stage, onto: 'h', commit: null });
const line = (at: number, type: string, extra: Partial<WorkerLine> = {}): WorkerLine => ({ at, type, episodeId: 'a', task: 'a', worker: 0, ...extra });
const end = { type: 'episode-end', id: 'a', task: 'a', attempt: 1, outcome: 'accepted', reason: null, message: null, commit: 'c', durationMs: 1 } as const;

describe('the hops of a BullMQ episode', () => {
  const events = [
    ev(0, { type: 'episode-start', id: 'a', task: 'a', attempt: 1 }),
    ev(2450, { type: 'integration', entries: [entry('a', 'gating')] }),
    ev(5600, { type: 'integration', entries: [entry('a', 'landing')] }),
    ev(5700, end),
  ];
  const lines = [
    line(30, 'start'),
    line(100, 'phase', { phase: 'workspace' }),
    line(300, 'phase', { phase: 'agent' }),
    line(2300, 'phase', { phase: 'collect' }),
    line(2400, 'tip-asked'),
    line(2460, 'tip-answered'),
    line(2470, 'phase', { phase: 'gate' }),
    line(5500, 'end'),
  ];

  it('splits an episode at each hop between the scheduler and its worker', () => {
    const [hops] = buildHops(events, lines);
    expect(partsOf(hops!, 3000)).toEqual({
      pickup: 30,
      'job setup': 70,
      'workspace + deps': 200,
      agent: 2000,
      collect: 100,
      'tip round trip': 60,
      'tip to gate': 10,
      gate: 3000,
      'after gate (record, send)': 30,
      'result delivery': 100,
      'seen to end': 100,
    });
  });

  it('counts the time a worker sat without a job', () => {
    const text = summarizeHops(buildHops(events, lines), new Map([['a', 3000]]), { start: 0, end: 6000 });
    // Before its job (30 ms) and after its result went out (500 ms).
    expect(text).toContain('530ms of 6000ms');
  });
});
