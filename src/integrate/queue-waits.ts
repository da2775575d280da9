import type { describeQueue } from './integration-queue.js';

/** What one change in the integration queue waits on now, a sentence a person reads after "waits for". */
export interface QueueWait {
  /** The change's episode. */
  id: string;
  task: string;
  what: string;
}

/**
 * What each change of the integration queue waits on, when it waits on something other than its
 * own work: a verification slot, the change ahead to be built, those ahead to land. A
 * change being built, gated, verified or landed is working, not waiting. Pure: the run turns these
 * into waits it tells and keeps (with how long so far), like an episode's.
 */
export function queueWaits(entries: ReturnType<typeof describeQueue>, slots: number): QueueWait[] {
  const verifying = entries.filter((e) => e.stage === 'verifying').length;
  const waits: QueueWait[] = [];
  entries.forEach((e, i) => {
    const ahead = entries[i - 1];
    const what =
      e.stage === 'built'
        ? verifying >= slots
          ? `a verification slot (all ${slots} are verifying the changes ahead)`
          : 'the changes ahead to land: it is verified again only on the accepted head'
        : e.stage === 'verified' && ahead
          ? `the change ahead (${ahead.task}) to land`
          : e.stage === 'waiting' && ahead
            ? `the change ahead (${ahead.task}) to be built: it is built on top of it`
            : null;
    if (what) waits.push({ id: e.id, task: e.task, what });
  });
  return waits;
}
