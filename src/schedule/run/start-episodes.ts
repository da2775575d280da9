import { agentForAttempt } from '../../agents/rotation.js';
import { newEpisodeId, type EpisodeJob } from '../../episode/episode-job.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../ledger/episode-record.js';
import type { PolicyCommand } from '../run-policy.js';
import type { Run } from './state.js';

type Start = Extract<PolicyCommand, { type: 'start' }>;

/** An episode whose lease is taken and whose record is in the world, ready for its job. */
export interface Opened {
  record: EpisodeRecord;
  round: number;
  earlier: string[];
}

/**
 * Opens the episodes the policy asked for, in order, until `limit` of them started: each takes its
 * task's path lease (`refused`: the tasks whose lease the store refused) and gets its record.
 */
export async function openEpisodes(run: Run, command: Start): Promise<{ opened: Opened[]; refused: string[] }> {
  const head = run.lander.head!;
  const opened: Opened[] = [];
  const refused: string[] = [];
  for (const { task, attempt, round, earlier } of command.tasks) {
    if (opened.length >= command.limit) break;
    const id = newEpisodeId();
    if (!(await run.leases.tryAcquire(id, task.paths))) {
      refused.push(task.id);
      continue;
    }
    const agent = agentForAttempt(run.agent, attempt).label;
    opened.push({ record: openEpisodeRecord({ id, world: run.manifest.name, task: task.id, attempt, base: head, agent, worker: run.worker }), round, earlier });
  }
  // Each record is in the world before its job exists; written together, a wave of episodes starts at once, not one write apart.
  // In process, in the ledger's journal (the episode's one git write is its final record); for workers elsewhere, in git.
  await Promise.all(opened.map(({ record }) => (run.distributed ? run.ledger.write(record) : run.ledger.open(record))));
  return { opened, refused };
}

/** Submits an opened episode's job to the episode queue. */
export async function submitEpisode(run: Run, { record, round, earlier }: Opened): Promise<void> {
  const job: EpisodeJob = { episodeId: record.id, world: run.manifest.name, task: record.task, attempt: record.attempt, round, base: record.base, earlier };
  run.jobs.set(record.id, job);
  run.emit({ type: 'episode-start', id: record.id, task: record.task, attempt: record.attempt });
  await run.queue.submit(job);
}

/** Says which refused tasks now wait for a lease another holder keeps, and until when. */
export function reportLeaseWaits(run: Run, refused: readonly string[]): void {
  const now = Date.now();
  for (const task of refused) {
    const until = run.policy.cooldown.get(task) ?? 0;
    if (until > now) run.emit({ type: 'lease-wait', task, untilMs: until });
  }
}
