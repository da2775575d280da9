import { describe, expect, it } from 'vitest';
import { queueWaits } from '../../../src/integrate/queue-waits.js';

const c = (n: string) => n.repeat(40);
const entry = (id: string, stage: string, onto: string | null = null, commit: string | null = null) =>
  ({ id, task: `task-${id}`, stage, onto, commit }) as Parameters<typeof queueWaits>[0][number];

describe('what the changes of the integration queue wait on', () => {
  it('a built change waits for a slot while every slot verifies a change ahead, and is told so', () => {
    const entries = [entry('a', 'verifying', c('1'), c('2')), entry('b', 'built', c('2'), c('3'))];
    expect(queueWaits(entries, 1)).toEqual([{ id: 'b', task: 'task-b', what: 'a verification slot (all 1 are verifying the changes ahead)' }]);
    // With a slot free it is not waiting for one: it was held back to be verified on the accepted head.
    expect(queueWaits(entries, 2)).toEqual([{ id: 'b', task: 'task-b', what: 'the changes ahead to land: it is verified again only on the accepted head' }]);
  });

  it('a verified change behind another waits for it to land; one waiting to be built waits for the one ahead', () => {
    const entries = [entry('a', 'building', c('1')), entry('b', 'waiting'), entry('c', 'verified', c('1'), c('4'))];
    expect(queueWaits(entries, 2)).toEqual([
      { id: 'b', task: 'task-b', what: 'the change ahead (task-a) to be built: it is built on top of it' },
      { id: 'c', task: 'task-c', what: 'the change ahead (task-b) to land' },
    ]);
  });

  it('changes at work, and a verified change at the front, wait on nothing', () => {
    const entries = [
      entry('a', 'verified', c('1'), c('2')),
      entry('b', 'verifying', c('2'), c('3')),
      entry('c', 'gating', c('3'), c('4')),
      entry('d', 'landing', c('1'), c('5')),
    ];
    expect(queueWaits(entries, 2)).toEqual([]);
    expect(queueWaits([entry('a', 'waiting')], 1)).toEqual([]);
  });
});
