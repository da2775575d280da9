import { VerificationLedger } from '../../integrate/verification/ledger.js';
import { landedRecord } from '../../integrate/lander.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { LeaseStore } from '../../queue/lease-store.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { WorldRepo } from '../../world/world-repo.js';

/** What a starting run takes over from the one before it. */
export interface Recovered {
  /** Changes that passed their own gate and wait for integration: they join the queue again. */
  integrating: EpisodeRecord[];
  /** Episodes workers may still be running (distributed only): their results are owed. */
  running: EpisodeRecord[];
  /** Records closed now: landed ones recorded as accepted, the rest abandoned. */
  closed: number;
}

/** An open record whose episode's gate passed its candidate: what waits for integration. */
export function passedItsGate(r: EpisodeRecord): boolean {
  return r.status === 'running' && r.candidate !== null && r.gate?.ok === true && r.reason === null;
}

/**
 * Rebuilds the run's state from the world after a stop or a crash, so nothing lands unrecorded
 * and nothing verified is lost: a change found on the accepted branch gets its record closed as
 * accepted (the lander died between its swap and its ledger write); a change that passed its gate
 * rejoins the integration queue; the rest are closed as abandoned in process, or taken back as
 * running when workers elsewhere may still be running them (never one the journal holds: its
 * episode ran in a process that is gone).
 */
export async function recoverOpenRecords(input: {
  world: WorldRepo;
  ledger: Ledger;
  branch: string;
  records: Map<string, EpisodeRecord>;
  distributed: boolean;
  /** Episodes the ledger's journal holds: run in a process of this machine that died, never by a worker elsewhere. */
  journaled?: ReadonlySet<string>;
}): Promise<Recovered> {
  const { world, ledger, records } = input;
  const out: Recovered = { integrating: [], running: [], closed: 0 };
  const verifications = new VerificationLedger(world.path);
  for (const record of [...records.values()]) {
    if (record.status !== 'running') continue;
    const landed = (await world.acceptedSince(input.branch, record.base)).find((c) => c.episode === record.id);
    if (landed) {
      const verification = landed.verification && landed.verification !== record.id ? await verifications.read(landed.verification) : null;
      const final = landedRecord(record, landed.commit, verification, null);
      await ledger.write(final);
      records.set(record.id, final);
      out.closed++;
    } else if (passedItsGate(record)) {
      out.integrating.push(record);
    } else if (input.distributed && !input.journaled?.has(record.id)) {
      out.running.push(record);
    } else {
      const closed: EpisodeRecord = {
        ...record,
        status: 'final',
        outcome: 'abandoned',
        reason: 'orchestrator-stopped',
        message: 'the orchestrator stopped before this episode ended',
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
