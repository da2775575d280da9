import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { IntegratingChange, ReviewingChange } from '../run-policy.js';
import type { Run } from './state.js';

/**
 * A change that passed its gate and waits for a person: its record says awaiting-review (open, so
 * a restart keeps it waiting, never lands it unasked), its lease and result are let go (nothing of
 * it is on the branch yet; when approved it is verified again on the head it lands on).
 */
export async function parkForReview(run: Run, change: IntegratingChange): Promise<void> {
  run.jobs.delete(change.id);
  if (run.stage.holds(change.id)) await run.stage.withdraw(change.id);
  // In process the gate's record and logs wait in the journal: written to git first, so a person sees the diff and the gate log.
  await run.ledger.writeHeld(change.id);
  const record = (await run.ledger.read(change.id)) ?? run.records.get(change.id)!;
  const parked: EpisodeRecord = { ...record, outcome: 'awaiting-review', endedAt: new Date().toISOString() };
  await run.ledger.write(parked);
  run.records.set(parked.id, parked);
  await run.leases.release(change.id);
  await run.queue.acknowledge(change.id);
  const durationMs = Date.parse(parked.endedAt!) - Date.parse(parked.startedAt);
  run.emit({
    type: 'episode-end',
    id: parked.id,
    task: parked.task,
    attempt: parked.attempt,
    outcome: 'awaiting-review',
    reason: null,
    message: null,
    commit: parked.candidate,
    durationMs,
  });
}

/** A rejected change: its record closed as rejected, the reviewer's note its message (the next attempt's prompt reflects on it). */
export async function closeReview(run: Run, id: string, note: string | null): Promise<EpisodeRecord> {
  const record = (await run.ledger.read(id)) ?? run.records.get(id)!;
  const message = `rejected in review${note ? `: ${note}` : ' (no note)'}`;
  const final: EpisodeRecord = {
    ...record,
    status: 'final',
    outcome: 'rejected',
    reason: 'review-rejected',
    message,
    signature: null,
    endedAt: new Date().toISOString(),
  };
  await run.ledger.write(final);
  return final;
}

/** A record waiting for review, as the policy holds it. */
export function reviewingOf(r: EpisodeRecord): [string, ReviewingChange] {
  const change: IntegratingChange = { id: r.id, task: r.task, candidate: r.candidate!, base: r.gatedOn ?? r.base, ...(r.source ? { source: r.source } : {}) };
  return [r.id, { task: r.task, change }];
}
