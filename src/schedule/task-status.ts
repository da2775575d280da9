import type { TaskSpec } from '../manifest/schema.js';

export type TaskState = 'pending' | 'running' | 'done' | 'blocked';

export interface TaskStatus {
  id: string;
  state: TaskState;
  /** Finished attempts that did not land (abandoned ones do not count). */
  failures: number;
  lastReason: string | null;
  lastMessage: string | null;
  /** The outcome of that last failure: which list (`genesis episodes --outcome …`) holds it. */
  lastOutcome?: EpisodeFacts['outcome'];
  /** The failure signature that repeated on consecutive attempts, when that blocked the task early. */
  repeated?: string | null;
}

/** The fields of an episode record the scheduler reads. */
export interface EpisodeFacts {
  task: string;
  status: 'running' | 'final';
  outcome: 'accepted' | 'rejected' | 'failed' | 'abandoned' | 'awaiting-review' | 'outrun' | null;
  reason: string | null;
  message: string | null;
  signature?: string | null;
}

/**
 * Each task's state, derived from the accepted history (what is done) and the ledger (what was
 * tried), never from a flag an agent could edit.
 */
export function deriveTaskStatuses(
  tasks: readonly TaskSpec[],
  done: ReadonlySet<string>,
  episodes: readonly EpisodeFacts[],
  runningTasks: ReadonlySet<string>,
  maxAttempts: number,
  /** Block early when the last two failures have the same signature: a deterministic failure. */
  blockOnRepeat = false,
): Map<string, TaskStatus> {
  const statuses = new Map<string, TaskStatus>();
  for (const task of tasks) {
    const finished = episodes.filter((e) => e.task === task.id && e.status === 'final' && (e.outcome === 'rejected' || e.outcome === 'failed'));
    const last = finished.at(-1);
    const before = finished.at(-2);
    const repeated = blockOnRepeat && last?.signature && before?.signature === last.signature ? last.signature : null;
    const state: TaskState = done.has(task.id)
      ? 'done'
      : runningTasks.has(task.id)
        ? 'running'
        : finished.length >= maxAttempts || repeated
          ? 'blocked'
          : 'pending';
    statuses.set(task.id, {
      id: task.id,
      state,
      failures: finished.length,
      lastReason: last?.reason ?? null,
      lastMessage: last?.message ?? null,
      lastOutcome: last?.outcome ?? null,
      ...(repeated ? { repeated } : {}),
    });
  }
  return statuses;
}

/** Tasks that can never run because something they depend on (directly or not) is blocked. */
export function tasksWaitingOnBlocked(tasks: readonly TaskSpec[], statuses: ReadonlyMap<string, TaskStatus>): Map<string, string> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const waiting = new Map<string, string>();
  const blockerOf = (id: string, seen: Set<string>): string | null => {
    if (seen.has(id)) return null;
    seen.add(id);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      if (statuses.get(dep)?.state === 'blocked') return dep;
      const deeper = blockerOf(dep, seen);
      if (deeper) return deeper;
    }
    return null;
  };
  for (const task of tasks) {
    if (statuses.get(task.id)?.state !== 'pending') continue;
    const blocker = blockerOf(task.id, new Set());
    if (blocker) waiting.set(task.id, blocker);
  }
  return waiting;
}
