import { leaseHolder } from '../carry-out/start-episodes.js';
import { endWait, tellWait } from '../carry-out/waits.js';
import type { Run } from '../ports/state.js';

/**
 * Keeps a distributed run's shared queue and leases in step, by the clock: every lease the
 * scheduler holds (episodes and changes in integration) renewed, every job submitted.
 */
export async function reconcileIfDue(run: Run): Promise<void> {
  const every = run.distributed?.reconcileMs ?? 5_000;
  // By the clock, not only when the inbox is quiet: a steady stream of results must not starve lease renewals.
  if (!run.distributed || Date.now() - run.reconciledAt < every) return;
  const { policy, leases } = run;
  for (const [id, task] of [...policy.running, ...policy.integrating]) {
    const holder = leaseHolder(run, id);
    // Lost (a Redis restart dropped it): taken again, so no new episode takes these paths meanwhile.
    const paths = policy.tasks.find((t) => t.id === task)?.paths;
    if (!(await leases.renew(holder)) && paths) await leases.tryAcquire(holder, paths);
  }
  for (const [id, job] of run.jobs) if (run.policy.running.has(id)) await run.queue.ensureSubmitted(job);
  await tellWorkerWaits(run);
  await tellLostWorkers(run);
  // A verification job Redis lost would leave its change waiting in the integration queue for ever.
  await run.verifications.ensureSubmitted();
  run.reconciledAt = Date.now();
}

/** The wait of an episode whose job no worker has taken yet. */
export const workerWaitId = (id: string) => `${id}:worker`;

/** An episode submitted and not yet taken waits for a worker: told from the look that finds it until the look that does not. */
async function tellWorkerWaits(run: Run): Promise<void> {
  if (!run.queue.notTaken) return;
  const running = [...run.jobs].filter(([id]) => run.policy.running.has(id));
  const waiting = new Set(await run.queue.notTaken(running.map(([id]) => id)).catch(() => []));
  for (const [id, job] of running) {
    if (waiting.has(id)) tellWait(run, workerWaitId(id), job.task, 'a free worker: every worker is busy, or none runs (genesis worker --redis <url>)');
    else endWait(run, workerWaitId(id));
  }
}

/** The worker last seen running each episode of a run, and the episodes whose worker is lost. */
const seenHolders = new WeakMap<Run, { holder: Map<string, string>; lost: Set<string> }>();

/**
 * A worker killed mid-episode leaves its job active until the queue finds it stalled (up to a
 * minute by default): said at the first look that finds no live worker running it, told as a wait
 * until a worker takes it again, and said again then, naming that worker.
 */
async function tellLostWorkers(run: Run): Promise<void> {
  if (!run.queue.holders) return;
  const seen = seenHolders.get(run) ?? { holder: new Map<string, string>(), lost: new Set<string>() };
  seenHolders.set(run, seen);
  const running = [...run.jobs].filter(([id]) => run.policy.running.has(id));
  const holders = await run.queue.holders(running.map(([id]) => id)).catch(() => new Map<string, string | null>());
  for (const [id, job] of running) {
    const now = holders.get(id);
    const was = seen.holder.get(id) ?? null;
    if (now === null && was !== null && !seen.lost.has(id)) {
      seen.lost.add(id);
      run.emit({ type: 'episode-holder', id, task: job.task, worker: null, was });
      run.emit({ type: 'wait', id: lostWaitId(id), task: job.task, what: `its job to be taken again: worker ${was} was lost (no heartbeat)` });
    }
    if (typeof now === 'string') {
      if (seen.lost.delete(id) || (was !== null && was !== now)) {
        run.emit({ type: 'wait', id: lostWaitId(id), task: job.task, what: null });
        run.emit({ type: 'episode-holder', id, task: job.task, worker: now, was });
      }
      seen.holder.set(id, now);
    }
  }
  for (const id of seen.holder.keys()) if (!run.policy.running.has(id)) seen.holder.delete(id);
  for (const id of seen.lost) {
    if (run.policy.running.has(id)) continue;
    seen.lost.delete(id);
    run.emit({ type: 'wait', id: lostWaitId(id), task: run.jobs.get(id)?.task ?? '', what: null });
  }
}

const lostWaitId = (id: string) => `${id}:lost`;
