import { deriveTaskStatuses, type EpisodeFacts, type TaskStatus } from './task-status.js';
import type { TaskSpec } from '../manifest/schema.js';

/** The facts of a retry marker the scheduler needs (a `TaskRetry` from src/world/task-retries.ts fits). */
export interface RetryFacts {
  task: string;
  /** ISO time; failures that ended at or before it no longer count. */
  at: string;
  note?: string | null;
}

/** An episode with the times that place it before or after a retry. */
export type TimedEpisodeFacts = EpisodeFacts & { startedAt: string; endedAt: string | null };

/** A task's status once retries are taken into account. */
export interface RetriedTaskStatus extends TaskStatus {
  /** Rejected or failed attempts since the latest retry: what `retry.maxAttempts` is held against. */
  failuresSinceRetry: number;
  /** The latest retry of this task, if any. */
  retriedAt: string | null;
  retryNote: string | null;
}

/** The latest retry of each task. */
export function latestRetries(retries: readonly RetryFacts[]): Map<string, RetryFacts> {
  const latest = new Map<string, RetryFacts>();
  for (const retry of retries) {
    const seen = latest.get(retry.task);
    if (!seen || Date.parse(retry.at) >= Date.parse(seen.at)) latest.set(retry.task, retry);
  }
  return latest;
}

/**
 * The episodes that still count toward blocking: a task's episodes that ended at or before its
 * latest retry are dropped. An episode still running when the retry came counts when it ends,
 * because it was not part of what the person looked at.
 */
export function episodesSinceRetry<T extends TimedEpisodeFacts>(episodes: readonly T[], retries: readonly RetryFacts[]): T[] {
  const latest = latestRetries(retries);
  return episodes.filter((episode) => {
    const retry = latest.get(episode.task);
    if (!retry) return true;
    const ended = Date.parse(episode.endedAt ?? episode.startedAt);
    return episode.status === 'running' || ended > Date.parse(retry.at);
  });
}

/** Rejected or failed attempts at `task` since its latest retry (all of them when never retried). */
export function countFailuresSinceRetry(task: string, episodes: readonly TimedEpisodeFacts[], retries: readonly RetryFacts[]): number {
  return episodesSinceRetry(
    episodes.filter((e) => e.task === task),
    retries.filter((r) => r.task === task),
  ).filter((e) => e.status === 'final' && (e.outcome === 'rejected' || e.outcome === 'failed')).length;
}

/**
 * `deriveTaskStatuses` with retries: a task is blocked when its failures *since its latest retry*
 * reach `maxAttempts`, while `failures` stays the count of every failed attempt, so attempt
 * numbers keep growing across retries (the statistics group attempts by number).
 */
export function deriveTaskStatusesWithRetries(
  tasks: readonly TaskSpec[],
  done: ReadonlySet<string>,
  episodes: readonly TimedEpisodeFacts[],
  runningTasks: ReadonlySet<string>,
  maxAttempts: number,
  retries: readonly RetryFacts[],
  blockOnRepeat = false,
): Map<string, RetriedTaskStatus> {
  const all = deriveTaskStatuses(tasks, done, episodes, runningTasks, maxAttempts, blockOnRepeat);
  const since = deriveTaskStatuses(tasks, done, episodesSinceRetry(episodes, retries), runningTasks, maxAttempts, blockOnRepeat);
  const latest = latestRetries(retries);
  const statuses = new Map<string, RetriedTaskStatus>();
  for (const [id, total] of all) {
    const counted = since.get(id)!;
    const retry = latest.get(id);
    statuses.set(id, {
      ...total,
      state: counted.state,
      ...(counted.repeated ? { repeated: counted.repeated } : { repeated: undefined }),
      failuresSinceRetry: counted.failures,
      retriedAt: retry?.at ?? null,
      retryNote: retry?.note ?? null,
    });
  }
  return statuses;
}
