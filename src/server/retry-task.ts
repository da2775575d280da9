import { GenesisError } from '../errors/genesis-error.js';
import type { StoredTaskRetry } from '../world/task-retries.js';
import type { WorldRepo } from '../world/world-repo.js';
import { buildTaskBoard, type BoardTask } from './projections/task-board.js';
import { probeLocalWorker, type LivenessProbe } from './projections/worker-liveness.js';
import { WorldSnapshots } from './projections/world-snapshot.js';

/** The longest note a retry keeps; a note is a hint for people, not a place for logs. */
export const MAX_RETRY_NOTE = 2000;

export interface RetryTaskInput {
  task: string;
  note?: string | null;
  /** Who asks, for the record (`dashboard 127.0.0.1`, `cli alice@host`). */
  by?: string | null;
}

/**
 * Gives a blocked task a fresh set of attempts: checks that the task exists and is blocked (as
 * derived from the ledger, with earlier retries applied), then writes a retry marker to the
 * world. The dashboard's Retry button calls this; `genesis task retry` should too.
 * MOVE: belongs next to the scheduler (src/schedule/) once the CLI command exists.
 */
export async function retryTask(
  world: WorldRepo,
  input: RetryTaskInput,
  options: { snapshots?: WorldSnapshots; probe?: LivenessProbe } = {},
): Promise<{ retry: StoredTaskRetry; task: BoardTask }> {
  const snapshots = options.snapshots ?? new WorldSnapshots(world);
  const probe = options.probe ?? ((worker: string) => probeLocalWorker(worker));
  const note = input.note?.trim() ?? '';
  if (note.length > MAX_RETRY_NOTE) {
    throw new GenesisError('retry-note-too-long', `the note has ${note.length} characters; at most ${MAX_RETRY_NOTE} are kept`, {
      hint: 'shorten the note; link to a longer text instead',
    });
  }
  const board = buildTaskBoard(await snapshots.current(), probe);
  const task = board.tasks.find((t) => t.id === input.task);
  if (!task) {
    throw new GenesisError('task-not-found', `no task "${input.task}" in world.yaml`, {
      hint: `the tasks are: ${board.tasks.map((t) => t.id).join(', ') || '(none)'}`,
    });
  }
  if (task.state !== 'blocked') {
    throw new GenesisError('task-not-blocked', `task ${task.id} is ${task.state}; only a blocked task can be retried`, {
      hint: task.state === 'pending' ? 'it will be tried again by the next genesis run' : 'nothing to do',
    });
  }
  const retry = await world.writeTaskRetry({ task: task.id, note, by: input.by ?? null });
  const after = buildTaskBoard(await snapshots.current(), probe).tasks.find((t) => t.id === task.id)!;
  return { retry, task: after };
}
