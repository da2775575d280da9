import { removeClosedEpisodeDirs } from '../../episode/workspace.js';
import type { RunSummary } from './events.js';
import { stopEpisodes } from './carry-out-commands.js';
import { guardBranch } from './run-loop.js';
import type { Run } from './state.js';

/** Stops both stages, whether the loop ended or threw: the episodes (in process), then the queues. */
export async function closeStages(run: Run): Promise<void> {
  await stopEpisodes(run);
  await run.queue.close();
  await run.verifications.close();
}

/**
 * Closes a finished run: the branch guarded once more, records a duplicate run reopened closed
 * again, the journal written to git, the closed episodes' directories gone; then its summary.
 */
export async function closeRun(run: Run): Promise<RunSummary> {
  const { ledger, records } = run;
  await guardBranch(run);
  // A worker running a duplicate of a closed episode (a job put back after Redis lost it) may have reopened its record:
  // only one this run closed (or found open) can be, so only those are read, not the whole ledger.
  const closedHere = [...records.values()].filter((r) => r.status === 'final');
  for (const known of closedHere) if ((await ledger.read(known.id))?.status === 'running') await ledger.write(known);
  // Changes a stopping run withdrew from integration stay open for the next run: in git, like any record, not only in the journal.
  await ledger.writeJournal();
  if (run.distributed) await removeClosedEpisodeDirs(run.world, (id) => (records.get(id) ?? run.summaries.get(id))?.status === 'final');
  const stop = run.policy.finished!;
  run.emit({ type: 'stop', reason: stop });
  return { stop, head: run.lander.head!, ...run.policy.tally, durationMs: Date.now() - run.startedAt, evidence: run.evidence };
}
