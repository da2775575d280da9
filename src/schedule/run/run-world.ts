import { removeClosedEpisodeDirs } from '../../episode/workspace.js';
import { guardBranch } from './carry-out/guard-branch.js';
import { stopEpisodes } from './carry-out/stop-episodes.js';
import type { RunSummary } from './ports/events.js';
import { openRun } from './open-run.js';
import { recoverRun } from './recover-run.js';
import { listenForWakes, runLoop } from './loop/run-loop.js';
import { settleSteering } from './wakes/steering.js';
import type { Run, RunOptions } from './ports/state.js';

export type { RunOptions } from './ports/state.js';

/**
 * `genesis run` as a pipeline: schedule → episode → integrate → land. The run policy (pure)
 * decides; the loop carries out its commands against the ports: the episode queue (agent and own
 * gate on a worker), the integration stage (speculative commits verified on workers, landed by the
 * lander), the lease store and the ledger. It never waits on integration: a slot freed by a change
 * that passed its gate is refilled at once. Everything it needs to resume is in the world.
 *
 * Open (ports and stages wired, the ledger read) → recover (what the last run left) → loop (events
 * → policy → commands → ports) → close (stages stopped, journal written, the summary).
 */
export async function runWorld(options: RunOptions): Promise<RunSummary> {
  const run = await openRun(options);
  await recoverRun(run);
  const disconnect = listenForWakes(run, options.signal);
  try {
    await runLoop(run);
  } finally {
    run.loopEnded = true;
    disconnect();
    await settleSteering(run);
    await closeStages(run);
    await run.unwatchWorkerWaits();
    await run.waits.clear();
  }
  return closeRun(run);
}

/** Stops both stages, whether the loop ended or threw: the episodes (in process), then the queues. */
async function closeStages(run: Run): Promise<void> {
  await stopEpisodes(run);
  await run.queue.close();
  await run.verifications.close();
}

/**
 * Closes a finished run: the branch guarded once more, records a duplicate run reopened closed
 * again, the journal written to git, the closed episodes' directories gone; then its summary.
 */
async function closeRun(run: Run): Promise<RunSummary> {
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
