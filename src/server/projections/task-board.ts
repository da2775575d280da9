import { tasksWaitingOnBlocked, type TaskState } from '../../schedule/task-status.js';
import { measureChangeCosts, type TaskCost } from '../../ledger/change-costs.js';
import type { EpisodeOutcome, EpisodeRecord } from '../../ledger/episode-record.js';
import type { RetriedTaskStatus } from '../../schedule/task-retry-status.js';
import { deriveWorldTaskStatuses } from '../../schedule/world-task-status.js';
import { doneTasksOf } from '../../world/history/done-tasks.js';
import type { LivenessProbe, WorkerLiveness } from './worker-liveness.js';
import type { WorldSnapshot } from './world-snapshot.js';

/** One card of the tasks board. */
export interface BoardTask {
  id: string;
  title: string;
  state: TaskState;
  dependsOn: string[];
  paths: string[];
  humanMinutes: number | null;
  /**
   * Episodes that ran to an end or run now, whatever became of them, but not those abandoned
   * (their worker was lost) or outrun (a rival landed first): the agent's attempts. The one
   * count `genesis status`, the tasks page and the task graph show.
   */
  attempts: number;
  /** Every episode of the task, abandoned and outrun ones too (`genesis episodes --task` lists them). */
  episodes: number;
  /** Every rejected or failed attempt, before and after retries. */
  failures: number;
  /** The failures held against `retry.maxAttempts` (those since the latest retry). */
  failuresSinceRetry: number;
  attemptsLeft: number;
  /** The latest finished attempt that did not land: what to read before retrying. */
  lastFailure: {
    episode: string;
    attempt: number;
    outcome: EpisodeOutcome;
    reason: string | null;
    message: string | null;
    signature: string | null;
    endedAt: string | null;
  } | null;
  /** What blocked the task (null unless it is blocked): its attempts used, the same failure twice, or a broken base. */
  blockedBy: 'attempts' | 'repeat' | 'broken-base' | null;
  /** A pending task that cannot start because this (blocked) task is upstream of it. */
  waitingOn: string | null;
  /** Set when a person retried the task and it has not landed since. */
  queuedForRetry: { at: string; note: string | null; by: string | null } | null;
  accepted: { commit: string; episode: string | null; attempt: number | null; date: string } | null;
  /** Set when a person reopened the done task (`genesis task reopen`) and it has not landed again since: the commit, and why. */
  reopened: { commit: string; date: string; reason: string | null; by: string | null } | null;
  running: { episode: string; attempt: number; startedAt: string; worker: string; liveness: WorkerLiveness } | null;
  /** What its episodes spent (tokens, cost, agent and gate time) and how long it took to land; null before its first episode. */
  spend: Omit<TaskCost, 'task'> | null;
}

/** The tasks board: every task of the manifest with its state derived from the ledger. */
export interface TaskBoard {
  maxAttempts: number;
  counts: Record<TaskState, number> & { queuedForRetry: number; total: number };
  tasks: BoardTask[];
}

/**
 * Builds the board. A record still `running` whose worker is known to be gone is not counted as
 * running (the next `genesis run` closes it as abandoned); one on another host is, as the ledger
 * says. A change waiting for review keeps its task busy whatever became of its worker: no run closes it.
 */
export function buildTaskBoard(snapshot: WorldSnapshot, probe: LivenessProbe): TaskBoard {
  const { manifest, records, retries, history } = snapshot;
  const maxAttempts = manifest.retry.maxAttempts;
  const runningRecords = records.filter((r) => r.status === 'running' && (r.outcome === 'awaiting-review' || probe(r.worker) !== 'gone'));
  const done = doneTasksOf(history);
  // The same derivation as the run loop's: the board and `task retry` can never disagree with `genesis run`.
  const statuses = deriveWorldTaskStatuses({ manifest, done, episodes: records, running: new Set(runningRecords.map((r) => r.task)), retries });
  const waiting = tasksWaitingOnBlocked(manifest.tasks, statuses);
  const latestRetry = new Map(retries.map((r) => [r.task, r])); // oldest first, so the latest wins
  const spent = new Map(measureChangeCosts(records).tasks.map(({ task, ...rest }) => [task, rest]));

  const tasks = manifest.tasks.map((task): BoardTask => {
    const status = statuses.get(task.id)!;
    const episodesOfTask = records.filter((r) => r.task === task.id);
    const failuresOfTask = records.filter((r) => r.task === task.id && r.status === 'final' && (r.outcome === 'rejected' || r.outcome === 'failed'));
    const last = failuresOfTask.at(-1);
    const accepted = history.find((c) => c.task === task.id);
    const running = runningRecords.find((r) => r.task === task.id);
    const retry = latestRetry.get(task.id);
    const reopen = reopenedBy(history, task.id);
    return {
      id: task.id,
      title: task.title,
      state: status.state,
      dependsOn: task.dependsOn,
      paths: task.paths,
      humanMinutes: task.humanMinutes ?? null,
      attempts: episodesOfTask.filter(isAttempt).length,
      episodes: episodesOfTask.length,
      failures: status.failures,
      failuresSinceRetry: status.failuresSinceRetry,
      attemptsLeft: Math.max(0, maxAttempts - status.failuresSinceRetry),
      lastFailure: last
        ? {
            episode: last.id,
            attempt: last.attempt,
            outcome: last.outcome!,
            reason: last.reason,
            message: last.message,
            signature: last.signature,
            endedAt: last.endedAt,
          }
        : null,
      blockedBy: status.state !== 'blocked' ? null : status.lastReason === 'broken-base' ? 'broken-base' : status.repeated ? 'repeat' : 'attempts',
      waitingOn: waiting.get(task.id) ?? null,
      queuedForRetry: retry && isQueued(status) ? { at: retry.at, note: retry.note, by: retry.by } : null,
      accepted: accepted ? { commit: accepted.commit, episode: accepted.episode, attempt: accepted.attempt, date: accepted.date } : null,
      reopened: reopen ? { commit: reopen.commit, date: reopen.date, reason: retry?.note?.replace(/^reopened: /, '') ?? null, by: retry?.by ?? null } : null,
      running: running
        ? { episode: running.id, attempt: running.attempt, startedAt: running.startedAt, worker: running.worker, liveness: probe(running.worker) }
        : null,
      spend: spent.get(task.id) ?? null,
    };
  });

  const count = (state: TaskState) => tasks.filter((t) => t.state === state).length;
  return {
    maxAttempts,
    counts: {
      pending: count('pending'),
      running: count('running'),
      done: count('done'),
      blocked: count('blocked'),
      queuedForRetry: tasks.filter((t) => t.queuedForRetry).length,
      total: tasks.length,
    },
    tasks,
  };
}

/** The reopening of a task that has not landed again since, from the history (newest first). */
function reopenedBy(history: WorldSnapshot['history'], task: string): WorldSnapshot['history'][number] | null {
  for (const c of history) {
    if (c.task === task) return null;
    if (c.reopen === task) return c;
  }
  return null;
}

/** An episode the agent had to the end, or has now: one its worker lost, or a rival outran, is not its attempt. */
function isAttempt(r: Pick<EpisodeRecord, 'status' | 'outcome'>): boolean {
  return r.status === 'running' || (r.outcome !== 'abandoned' && r.outcome !== 'outrun');
}

// Retried and still waiting for an episode (or between the retried attempts).
function isQueued(status: RetriedTaskStatus): boolean {
  return status.retriedAt !== null && status.state === 'pending';
}
