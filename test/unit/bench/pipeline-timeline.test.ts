import { describe, expect, it } from 'vitest';
import { buildTimeline, summarizeTimeline, type StampedEvent } from '../../../bench/pipeline-timeline.js';

const ev = (at: number, event: StampedEvent['event']): StampedEvent => ({ at, event });
const entry = (id: string, stage: string, onto: string | null) => ({ id, task: id, stage, onto, commit: null });

describe('the run timeline', () => {
  const events = [
    ev(0, { type: 'start' }),
    ev(10, { type: 'episode-start', id: 'a', task: 'a' }),
    ev(20, { type: 'episode-phase', id: 'a', task: 'a', phase: 'agent' }),
    ev(2020, { type: 'episode-phase', id: 'a', task: 'a', phase: 'collect' }),
    ev(2100, { type: 'episode-phase', id: 'a', task: 'a', phase: 'gate' }),
    ev(5100, { type: 'integration', entries: [entry('a', 'waiting', null)] }),
    ev(5200, { type: 'integration', entries: [entry('a', 'verifying', 'h1')] }),
    ev(8200, { type: 'integration', entries: [entry('a', 'verified', 'h1')] }),
    ev(8300, { type: 'integration', entries: [entry('a', 'landing', 'h1')] }),
    ev(8400, { type: 'episode-end', id: 'a', task: 'a', outcome: 'accepted' }),
  ];

  it('places the agent, the own gate, each verification and the landing of a change', () => {
    const [row] = buildTimeline(events);
    expect(row).toEqual({
      id: 'a',
      task: 'a',
      start: 10,
      agent: [20, 2020],
      gate: [2100, 5100],
      joined: 5100,
      verifications: [{ start: 5200, end: 8200, onto: 'h1' }],
      end: 8400,
      outcome: 'accepted',
    });
  });

  it('adds up where the time went', () => {
    const totals = summarizeTimeline(buildTimeline(events), 8500);
    expect(totals).toMatchObject({ agentS: 2, ownGateS: 3, verifyWaitS: 0.1, verifyS: 3, joinToLandS: 3.3, verifications: 1, lastLandS: 8.4 });
  });

  it('ends the own gate of a change that took its place before gating when its place stops waiting for it', () => {
    const reserved = [
      ev(0, { type: 'start' }),
      ev(10, { type: 'episode-start', id: 'b', task: 'b' }),
      ev(20, { type: 'episode-phase', id: 'b', task: 'b', phase: 'agent' }),
      ev(2020, { type: 'episode-phase', id: 'b', task: 'b', phase: 'collect' }),
      ev(2100, { type: 'integration', entries: [entry('b', 'building', 'h1')] }),
      ev(2150, { type: 'integration', entries: [entry('b', 'gating', 'h1')] }),
      ev(2200, { type: 'episode-phase', id: 'b', task: 'b', phase: 'gate' }),
      ev(5200, { type: 'integration', entries: [entry('b', 'verified', 'h1')] }),
      ev(5300, { type: 'integration', entries: [entry('b', 'landing', 'h1')] }),
      ev(5400, { type: 'episode-end', id: 'b', task: 'b', outcome: 'accepted' }),
    ];
    const [row] = buildTimeline(reserved);
    expect(row).toMatchObject({ agent: [20, 2020], joined: 2100, gate: [2200, 5200], verifications: [], end: 5400 });
  });
});
