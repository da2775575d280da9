import { agentForAttempt } from '../../../agents/rotation.js';
import { newEpisodeId, type EpisodeJob } from '../../../episode/episode-job.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../ledger/episode-record.js';
import type { PolicyCommand } from '../../run-policy.js';
import { spentOnTask } from '../../policy-ledger.js';
import type { Run } from '../ports/state.js';
import { endWait, tellWait } from './waits.js';

type Start = Extract<PolicyCommand, { type: 'start' }>;

/** An episode whose lease is taken and whose record is in the world, ready for its job. */
export interface Opened {
  record: EpisodeRecord;
  round: number;
  earlier: string[];
}

/**
 * Opens the episodes the policy asked for, in order, until `limit` of them started: each takes its
 * task's path lease (`refused`: the tasks whose lease the store refused) and gets its record. The
 * racers of a task take one lease between them, in the name of the race (its first racer's id):
 * they change the same paths from the same base, and only one of their changes lands.
 */
export async function openEpisodes(run: Run, command: Start): Promise<{ opened: Opened[]; refused: string[] }> {
  const head = run.lander.head!;
  const opened: Opened[] = [];
  const refused: string[] = [];
  for (const { task, attempt, round, earlier, racers } of command.tasks) {
    if (opened.length >= command.limit) break;
    // A race starts whole or not yet: its racers are alike, and the model counts N per round.
    if (racers > command.limit - opened.length) continue;
    const count = racers;
    const ids = Array.from({ length: count }, () => newEpisodeId());
    const lead = ids[0]!;
    if (!(await run.leases.tryAcquire(lead, task.paths))) {
      refused.push(task.id);
      continue;
    }
    // One racer is no race: an episode of its own, as without `race`.
    const race = count > 1 ? lead : null;
    if (race) run.raceLeases.set(race, new Set(ids));
    ids.forEach((id, k) => {
      // Each racer is an attempt of its own: with a rotation, each runs another agent or model.
      const agent = agentForAttempt(run.agent, attempt + k).label;
      const record = openEpisodeRecord({ id, world: run.manifest.name, task: task.id, attempt: attempt + k, base: head, agent, worker: run.worker, race });
      opened.push({ record, round: round + k, earlier });
    });
  }
  // Each record is in the world before its job exists; written together, a wave of episodes starts at once, not one write apart.
  // In process, in the ledger's journal (the episode's one git write is its final record); for workers elsewhere, in git.
  await Promise.all(opened.map(({ record }) => (run.distributed ? run.ledger.write(record) : run.ledger.open(record))));
  return { opened, refused };
}

/** Submits an opened episode's job to the episode queue. */
export async function submitEpisode(run: Run, { record, round, earlier }: Opened): Promise<void> {
  const job: EpisodeJob = {
    episodeId: record.id,
    world: run.manifest.name,
    task: record.task,
    attempt: record.attempt,
    round,
    base: record.base,
    earlier,
    ...(record.race && record.race !== record.id ? { lease: record.race } : {}),
    ...spendableOf(run, record.task),
  };
  run.jobs.set(record.id, job);
  run.emit({ type: 'episode-start', id: record.id, task: record.task, attempt: record.attempt });
  endWait(run, leaseWaitId(record.task));
  await run.queue.submit(job);
}

/**
 * What is left of the world's token and dollar budgets (lifts included) and of the task's own over
 * its attempts: the episode's gateway stops its calls there, as they stream.
 */
function spendableOf(run: Run, task: string): Pick<EpisodeJob, 'spendable'> {
  const { budgets } = run.policy.config;
  const { spent } = run.policy.ledger;
  const { maxTaskTokens, maxTaskCostUsd } = run.manifest.agent;
  const taskSpent = maxTaskTokens === undefined && maxTaskCostUsd === undefined ? null : spentOnTask(run.policy.ledger, task);
  const spendable = {
    ...(budgets.maxTokens === undefined ? {} : { tokens: Math.max(0, budgets.maxTokens - (spent.tokens ?? 0)) }),
    ...(budgets.maxCostUsd === undefined ? {} : { costUsd: Math.max(0, budgets.maxCostUsd - (spent.costUsd ?? 0)) }),
    ...(maxTaskTokens === undefined || !taskSpent ? {} : { taskTokens: Math.max(0, maxTaskTokens - taskSpent.tokens) }),
    ...(maxTaskCostUsd === undefined || !taskSpent ? {} : { taskCostUsd: Math.max(0, maxTaskCostUsd - taskSpent.costUsd) }),
  };
  return Object.keys(spendable).length > 0 ? { spendable } : {};
}

/**
 * Lets go of the path lease an episode that ended held: its own, or, for a racer, the race's once
 * no other racer of it needs it any more (a winner waiting for integration still does).
 */
export async function releaseLease(run: Run, record: Pick<EpisodeRecord, 'id' | 'race'>): Promise<void> {
  const racers = record.race ? run.raceLeases.get(record.race) : undefined;
  // A winner approved after review took a lease of its own again.
  if (!racers?.has(record.id)) return run.leases.release(record.id);
  racers.delete(record.id);
  if (racers.size > 0) return;
  run.raceLeases.delete(record.race!);
  await run.leases.release(record.race!);
}

/** The holder of the path lease an episode works under: its race's while the race holds one, else its own. */
export function leaseHolder(run: Run, id: string): string {
  const race = run.records.get(id)?.race;
  return race && run.raceLeases.get(race)?.has(id) ? race : id;
}

/** Says which refused tasks now wait for a lease another holder keeps, and until when. */
export function reportLeaseWaits(run: Run, refused: readonly string[]): void {
  const now = Date.now();
  for (const task of refused) {
    const until = run.policy.cooldown.get(task) ?? 0;
    if (until <= now) continue;
    run.emit({ type: 'lease-wait', task, untilMs: until });
    // A wait as any other too, from its first refusal until an episode of the task starts: told with how long so far.
    tellWait(run, leaseWaitId(task), task, 'the lease of its paths, which a holder outside this run keeps');
  }
}

const leaseWaitId = (task: string) => `${task}:lease`;
