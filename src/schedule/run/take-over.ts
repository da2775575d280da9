import { verificationLedgerOf } from '../../integrate/verification/ledger.js';
import { landedRecord } from '../../integrate/lander.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { EpisodeSummary } from '../../ledger/summary.js';
import type { LeaseStore } from '../../queue/lease-store.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { crashClosing } from '../run-policy.js';
import type { Recovered } from './ports/state.js';

/** An open record whose episode's gate passed its candidate: what waits for integration. */
export function passedItsGate(r: EpisodeRecord): boolean {
  // One handed to the queue unjudged is in the queue as much as one that passed: the queue's verification is its gate.
  return (
    r.status === 'running' && r.candidate !== null && (r.gate?.ok === true || r.handedOver === true) && r.reason === null && r.outcome !== 'awaiting-review'
  );
}

/**
 * Rebuilds the run's state from the world after a stop or a crash, so nothing lands unrecorded
 * and nothing verified is lost: a change found on the accepted branch gets its record closed as
 * accepted (the lander died between its swap and its ledger write); a change that passed its gate
 * rejoins the integration queue; the rest are closed in process (crashClosing: abandoned, or a
 * poison pill when its gate killed the run twice in a row), or taken back as running when workers
 * elsewhere may still be running them (never one the journal holds: its episode ran in a process
 * that is gone).
 */
export async function recoverOpenRecords(input: {
  world: WorldRepo;
  ledger: Ledger;
  branch: string;
  records: Map<string, EpisodeRecord>;
  distributed: boolean;
  /** Episodes the ledger's journal holds: run in a process of this machine that died, never by a worker elsewhere. */
  journaled?: ReadonlySet<string>;
  /** Episodes whose own gate was running in this machine's run when it died (gatesRunningAtCrash). */
  inGate?: ReadonlySet<string>;
  /** Every episode of the world, final ones included: what the task's episodes before an open one ended with. */
  summaries?: ReadonlyMap<string, Pick<EpisodeSummary, 'id' | 'task' | 'status' | 'reason'>>;
}): Promise<Recovered> {
  const { world, ledger, records } = input;
  const out: Recovered = { integrating: [], running: [], reviewing: [], closed: 0 };
  const verifications = verificationLedgerOf(world);
  for (const record of [...records.values()]) {
    if (record.status !== 'running') continue;
    const landed = (await world.acceptedSince(input.branch, record.base)).find((c) => c.episode === record.id);
    if (landed) {
      const verification = landed.verification && landed.verification !== record.id ? await verifications.read(landed.verification) : null;
      const final = landedRecord(record, landed.commit, verification, null);
      await ledger.write(final);
      records.set(record.id, final);
      out.closed++;
    } else if (record.outcome === 'awaiting-review' && record.candidate !== null) {
      out.reviewing.push(record);
    } else if (passedItsGate(record) && !input.inGate?.has(record.id)) {
      // (One whose verification on a tip was running when the run died is closed below: it may be what killed it.)
      out.integrating.push(record);
    } else if (input.distributed && !input.journaled?.has(record.id)) {
      out.running.push(record);
    } else {
      // Episode ids sort by start time.
      const earlier = [...(input.summaries?.values() ?? [])]
        .filter((r) => r.task === record.task && r.status === 'final' && r.id < record.id)
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      const closed: EpisodeRecord = {
        ...record,
        status: 'final',
        ...crashClosing(input.inGate?.has(record.id) ?? false, earlier),
        endedAt: new Date().toISOString(),
      };
      await ledger.write(closed);
      records.set(record.id, closed);
      out.closed++;
    }
  }
  return out;
}

/**
 * A starting run holds the world alone (the run lock, and in Redis the integrator lock), so every
 * path lease it finds is its predecessor's. Only the episodes it takes over keep theirs: any other
 * holder belongs to an episode whose record is final (its scheduler died between writing the record
 * and releasing the lease), to one closed just now, or to none at all (it died between taking the
 * lease and writing the record). Left alone, such a lease keeps its task's paths from every new
 * episode until it expires, and a run with nothing else to do stops as blocked meanwhile.
 */
export async function releaseLeftoverLeases(leases: LeaseStore, recovered: Recovered): Promise<string[]> {
  const kept = new Set([...recovered.running, ...recovered.integrating].map((r) => r.id));
  const released = (await leases.holders()).filter((holder) => !kept.has(holder));
  for (const holder of released) await leases.release(holder);
  return released;
}
