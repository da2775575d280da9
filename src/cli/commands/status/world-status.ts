import type { BoardTask, TaskBoard } from '../../../server/projections/task-board.js';
import { formatTable } from '../../output.js';

const BLOCKED_BY: Record<NonNullable<BoardTask['blockedBy']>, (t: BoardTask, max: number) => string> = {
  attempts: (_t, max) => `used its ${max} attempts`,
  repeat: () => 'failed the same way twice in a row',
  'broken-base': () => 'found the accepted head failing its own gate (a broken base)',
};

/** Why a task is where it is, in a few words: what it waits for, what blocked it, where it landed. */
export function describeTaskState(task: BoardTask, board: Pick<TaskBoard, 'maxAttempts' | 'tasks'>): string {
  const last = task.lastFailure
    ? `last ${task.lastFailure.outcome}: ${task.lastFailure.reason ?? '?'}${task.lastFailure.message ? `: ${task.lastFailure.message}` : ''}`
    : '';
  switch (task.state) {
    case 'done':
      return task.accepted ? `landed in ${task.accepted.commit.slice(0, 12)}${task.accepted.attempt ? ` (attempt ${task.accepted.attempt})` : ''}` : 'landed';
    case 'running':
      return task.running
        ? `attempt ${task.running.attempt} by ${task.running.worker}${task.running.liveness === 'gone' ? ' (gone: the next run closes it)' : ''}, since ${task.running.startedAt.slice(11, 19)}`
        : 'running';
    case 'blocked':
      return [task.blockedBy ? BLOCKED_BY[task.blockedBy](task, board.maxAttempts) : 'blocked', last].filter(Boolean).join('; ');
    case 'pending': {
      if (task.waitingOn) return `waits for ${task.waitingOn}, which is blocked`;
      const open = task.dependsOn.filter((d) => board.tasks.find((t) => t.id === d)?.state !== 'done');
      const why = task.queuedForRetry
        ? `retried${task.queuedForRetry.by ? ` by ${task.queuedForRetry.by}` : ''}, waits for an episode`
        : open.length > 0
          ? `waits for ${open.join(', ')}`
          : 'ready';
      return [why, last].filter(Boolean).join('; ');
    }
  }
}

/** The tasks of a world, one line each: state, attempts made and left, and why. */
export function formatTaskBoard(board: TaskBoard, width: number): string {
  const c = board.counts;
  const head = `tasks: ${c.done} of ${c.total} done · ${c.running} running · ${c.pending} pending · ${c.blocked} blocked`;
  const rows = board.tasks.map((t) => [
    t.id,
    t.state,
    t.attempts,
    t.state === 'done' || t.state === 'blocked' ? '-' : t.attemptsLeft,
    describeTaskState(t, board),
  ]);
  const lines = [head, formatTable(['task', 'state', 'attempts', 'left', 'why'], rows, { width, shrink: [0, 4] })];
  const blocked = board.tasks.filter((t) => t.state === 'blocked');
  if (blocked.length > 0) {
    const one = blocked.length === 1 ? blocked[0]!.id : '<task>';
    lines.push(
      `blocked: read the attempts (genesis episodes --task ${one}) and fix what failed (genesis amend),`,
      `  then give the task new attempts: genesis task retry ${one}`,
    );
  }
  return lines.join('\n');
}
