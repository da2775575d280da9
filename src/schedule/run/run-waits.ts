import type { Run } from './state.js';

/**
 * The waits the run itself finds (a lease another holder keeps, a job no worker has taken), as
 * against those a job tells as it goes: each is told once when found and once when it ends, so
 * the output and the waits file see one wait, however often the run looks.
 */
export function beginWait(run: Run, id: string, task: string, what: string): void {
  if (run.waits.taskOf(id) === undefined) run.emit({ type: 'wait', id, task, what });
}

/** Ends the wait `id` if it goes on; nothing is told otherwise. */
export function endWait(run: Run, id: string): void {
  const task = run.waits.taskOf(id);
  if (task !== undefined) run.emit({ type: 'wait', id, task, what: null });
}

/** A task held back by a path lease a holder outside this run keeps. */
export const leaseWaitId = (task: string) => `${task}:lease`;

/** An episode whose job no worker has taken yet. */
export const workerWaitId = (episodeId: string) => `${episodeId}:worker`;
