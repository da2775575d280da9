import type { EpisodeResult } from '../../../episode/episode-job.js';
import { GenesisError } from '../../../errors/genesis-error.js';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import type { EpisodeSummary } from '../../../ledger/summary.js';
import type { Closing, IntegratingChange, PolicyCommand, ReviewingChange } from '../../run-policy.js';
import { releaseLease } from './start-episodes.js';
import type { Run } from '../ports/state.js';

/**
 * What the loop does with an episode's result once the policy has judged it: the change joins the
 * integration queue, or the episode's record is closed (as the result says, or refused as forged),
 * or the result is dropped. The policy decides which; these only reach the ports.
 */
export async function integrateChange(run: Run, change: Extract<PolicyCommand, { type: 'integrate' }>['change']): Promise<void> {
  run.jobs.delete(change.id);
  // Its place in the integration queue, taken when its agent finished (see ReserveTip).
  if (run.stage.holds(change.id)) await run.stage.gated(change, change.candidate);
  else await run.stage.join(change);
  await run.queue.acknowledge(change.id);
}

/** Closes the record of an episode whose result claimed a pass the ledger does not hold; its place in the queue is given up. */
export async function refuseResult(run: Run, id: string, record: EpisodeRecord | null, closing: Closing): Promise<EpisodeRecord> {
  run.jobs.delete(id);
  if (run.stage.holds(id)) await run.stage.withdraw(id);
  const refused: EpisodeRecord = { ...(record ?? run.records.get(id)!), status: 'final', ...closing, endedAt: new Date().toISOString() };
  await run.ledger.write(refused);
  return refused;
}

/**
 * Closes the record of an episode that ends without joining the integration queue (its agent
 * failed, its gate rejected it, it was stopped). Safe to call twice: a final record is returned as it is.
 */
export async function closeEpisode(run: Run, result: EpisodeResult): Promise<EpisodeRecord> {
  run.jobs.delete(result.episodeId);
  if (run.stage.holds(result.episodeId)) await run.stage.withdraw(result.episodeId);
  const record = (await run.ledger.read(result.episodeId)) ?? run.records.get(result.episodeId);
  if (!record) throw new GenesisError('episode-unknown', `episode ${result.episodeId} has no ledger record`, { hint: 'episodes are created by genesis run' });
  if (record.status === 'final') return record;
  const final: EpisodeRecord = {
    ...record,
    status: 'final',
    outcome: result.verdict === 'passed' || result.verdict === 'queued' ? 'rejected' : result.verdict,
    reason: result.reason,
    message: result.message,
    signature: result.signature,
    endedAt: new Date().toISOString(),
  };
  await run.ledger.write(final);
  return final;
}

/**
 * Closes the record of a racer whose race another racer won: `outrun`, nobody's failure. Whatever it
 * made stays in the ledger (its candidate, gate and logs, as its record holds them); a place it took
 * in the integration queue is given up.
 */
export async function closeOutrun(run: Run, id: string, winner: string): Promise<EpisodeRecord> {
  run.jobs.delete(id);
  if (run.stage.holds(id)) await run.stage.withdraw(id);
  // In process the gate's record and logs wait in the journal: written to git with the final record.
  const record = (await run.ledger.read(id)) ?? run.records.get(id);
  if (!record) throw new GenesisError('episode-unknown', `episode ${id} has no ledger record`, { hint: 'episodes are created by genesis run' });
  if (record.status === 'final') return record;
  const message = `outrun: episode ${winner} won the race for task ${record.task}`;
  const final: EpisodeRecord = { ...record, status: 'final', outcome: 'outrun', reason: 'outrun', message, signature: null, endedAt: new Date().toISOString() };
  await run.ledger.write(final);
  return final;
}

/** A result delivered twice, or of an episode already integrating. A duplicate run may have reopened a closed record: closed again. */
export async function dropResult(run: Run, id: string): Promise<void> {
  const known = run.records.get(id) ?? run.summaries.get(id);
  const now = known?.status === 'final' ? await run.ledger.read(id) : null;
  // A record closed before this run is known by its summary: the reopened record, closed again as the summary says.
  if (known && now && now.status !== 'final') await run.ledger.write(run.records.get(id) ?? { ...now, ...closingOf(known) });
  await run.queue.acknowledge(id);
}

/** What closing an episode sets on its record (a summary holds all of it). */
function closingOf(s: EpisodeSummary): Partial<EpisodeRecord> {
  return { status: s.status, outcome: s.outcome, reason: s.reason, message: s.message, signature: s.signature, endedAt: s.endedAt, commit: s.commit };
}

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
  await releaseLease(run, parked);
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

/** Changes that passed their own gate before the last run stopped join the integration queue again. */
export async function rejoinIntegration(run: Run): Promise<void> {
  for (const r of run.recovered.integrating) {
    // Its change exists and the policy counts it as integrating: it joins even if its paths are taken.
    await run.leases.tryAcquire(r.id, run.manifest.tasks.find((t) => t.id === r.task)?.paths ?? []);
    await run.stage.join({
      id: r.id,
      task: r.task,
      candidate: r.candidate!,
      base: r.gatedOn ?? r.base,
      ...(r.source ? { source: r.source } : {}),
      ...(r.handedOver ? { ungated: true } : {}),
    });
  }
}
