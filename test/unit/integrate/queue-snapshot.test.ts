import { describe, expect, it } from 'vitest';
import { describeEntries, formatQueueSnapshot } from '../../../src/integrate/queue-snapshot.js';

describe('the integration queue as genesis status shows it', () => {
  it('says what is verified on top of what, and what waits, front first', () => {
    const text = formatQueueSnapshot({
      at: '2026-12-01T09:00:00.000Z',
      head: 'a'.repeat(40),
      entries: [
        { id: 'e1', task: 't1', stage: 'verified', onto: 'a'.repeat(40), commit: 'b'.repeat(40) },
        { id: 'e2', task: 't2', stage: 'verifying', onto: 'b'.repeat(40), commit: 'c'.repeat(40) },
        { id: 'e3', task: 't3', stage: 'waiting', onto: null, commit: null },
      ],
    });
    const lines = text.split('\n');
    expect(lines[0]).toContain(`on head ${'a'.repeat(12)}`);
    expect(lines[1]).toMatch(/t1 .* verified on a{12} \(head\), lands when those ahead have/);
    expect(lines[2]).toMatch(/t2 .* verifying c{12} on b{12} \(t1\)/);
    expect(lines[3]).toMatch(/t3 .* waits to be built/);
  });

  it('names what each change sits on: the head, the change ahead, or nothing yet', () => {
    const views = describeEntries({
      at: '2026-12-01T09:00:00.000Z',
      head: 'a'.repeat(40),
      entries: [
        { id: 'e1', task: 't1', stage: 'verifying', onto: 'a'.repeat(40), commit: 'b'.repeat(40) },
        { id: 'e2', task: 't2', stage: 'built', onto: 'b'.repeat(40), commit: 'c'.repeat(40) },
        { id: 'e3', task: 't3', stage: 'waiting', onto: null, commit: null },
      ],
    });
    expect(views.map((v) => [v.position, v.onTopOf])).toEqual([
      [1, { kind: 'head' }],
      [2, { kind: 'change', id: 'e1', task: 't1' }],
      [3, { kind: 'nothing-yet' }],
    ]);
  });

  it('says the queue is empty when no run wrote one', () => {
    expect(formatQueueSnapshot(null)).toBe('integration queue: empty');
  });
});
