import { removeClosedEpisodeDirs, removeStaleWorkspaces } from '../../episode/workspace.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { initialPolicyState, racersToStop, racesOf } from '../run-policy.js';
import { gatesRunningAtCrash } from './gate-marks.js';
import { recoverOpenRecords, releaseLeftoverLeases } from './take-over.js';
import { reviewingOf } from './carry-out/episode-results.js';
import type { Run } from './ports/state.js';

/**
 * Takes over what the run before this one left (see recoverOpenRecords): records closed or taken
 * back, the leftover leases and workspaces gone, and the policy's first state, which knows every
 * episode of the world and those this run takes over.
 */
export async function recoverRun(run: Run): Promise<void> {
  const { world, ledger, manifest, records, summaries } = run;
  const distributed = run.distributed !== undefined;
  // Read before anything else: this run's own gates mark themselves in the same place.
  const inGate = gatesRunningAtCrash(world);
  const recovered = await recoverOpenRecords({ world, ledger, branch: manifest.branch, records, distributed, journaled: run.journaled, inGate, summaries });
  // Racers taken over stay in their race: of two that passed before the stop, only the first goes on.
  const passers = [...recovered.integrating, ...recovered.reviewing];
  const { races, outrun } = racesOf([...recovered.running, ...passers], new Set(passers.map((r) => r.id)));
  for (const { id, winner } of outrun) {
    const record = records.get(id)!;
    const message = `outrun: episode ${winner} won the race for task ${record.task}`;
    const final: EpisodeRecord = {
      ...record,
      status: 'final',
      outcome: 'outrun',
      reason: 'outrun',
      message,
      signature: null,
      endedAt: new Date().toISOString(),
    };
    await ledger.write(final);
    records.set(id, final);
    recovered.integrating = recovered.integrating.filter((r) => r.id !== id);
    recovered.reviewing = recovered.reviewing.filter((r) => r.id !== id);
    recovered.closed++;
  }
  for (const r of records.values()) summaries.set(r.id, r);
  if (!distributed) await removeStaleWorkspaces(world);
  else await removeClosedEpisodeDirs(world, (id) => summaries.get(id)?.status === 'final');
  // A killed scheduler's leases outlive it (in Redis, until their ttl): all but those of the episodes taken over go at once.
  await releaseLeftoverLeases(run.leases, recovered);
  for (const r of recovered.running) run.jobs.set(r.id, { episodeId: r.id, world: manifest.name, task: r.task, attempt: r.attempt, base: r.base });
  const done = await world.doneTasks(manifest.branch);
  run.recovered = recovered;
  run.policy = initialPolicyState({
    config: run.policy.config,
    tasks: manifest.tasks,
    done,
    records: summaries.values(),
    now: Date.now(),
    running: new Map(recovered.running.map((r) => [r.id, r.task])),
    integrating: new Map(recovered.integrating.map((r) => [r.id, r.task])),
    reviewing: new Map(recovered.reviewing.map(reviewingOf)),
    races,
    retries: await world.taskRetries(),
  });
  await Promise.all(racersToStop(run.policy).map((id) => run.queue.cancel(id)));
  run.emit({
    type: 'start',
    world: world.path,
    head: run.startHead,
    sandbox: run.sandbox.kind,
    agent: run.agent.label,
    tasks: manifest.tasks.length,
    done: done.size,
    recovered: recovered.closed + recovered.running.length + recovered.integrating.length,
    parallelism: manifest.parallelism,
  });
  run.reconciledAt = Date.now();
}
