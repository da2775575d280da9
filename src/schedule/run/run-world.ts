import type { RunSummary } from './events.js';
import { closeRun, closeStages } from './close-run.js';
import { openRun } from './open-run.js';
import { recoverRun } from './recover-run.js';
import { listenForWakes, runLoop } from './run-loop.js';
import type { RunOptions } from './state.js';

export type { RunOptions } from './state.js';

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
    disconnect();
    await closeStages(run);
  }
  return closeRun(run);
}
