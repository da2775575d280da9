import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { Run } from './ports/state.js';

/**
 * What the run knows of the ledger at its start. The run holds the world alone: what the journal
 * keeps of a run before it is that run's leftovers, tidied first. Summaries of every episode come
 * through the index (a run's start reads no record of the history in full), the open records in full.
 */
export async function readLedger(ledger: Ledger): Promise<Pick<Run, 'journaled' | 'summaries' | 'records'>> {
  await ledger.tidyJournal();
  const journaled = await ledger.journaled();
  const summaries = new Map((await ledger.readSummaries()).map((r) => [r.id, r]));
  const records = new Map<string, EpisodeRecord>();
  for (const s of summaries.values()) {
    const full = s.status === 'final' ? null : await ledger.read(s.id);
    if (full) records.set(full.id, full);
  }
  return { journaled, summaries, records };
}
