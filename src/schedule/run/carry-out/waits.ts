import type { Run } from '../ports/state.js';

/**
 * The one rule for the run's own waits: a wait is told once, when it begins (not again while it
 * lasts), and its end is told only if its beginning was. What is told is kept in run.waits, so
 * `genesis status --world` and the dashboard see the same.
 */
export function tellWait(run: Run, id: string, task: string, what: string): void {
  if (run.waits.taskOf(id) === undefined) run.emit({ type: 'wait', id, task, what });
}

/** Ends a wait if it was told (see tellWait). */
export function endWait(run: Run, id: string): void {
  const task = run.waits.taskOf(id);
  if (task !== undefined) run.emit({ type: 'wait', id, task, what: null });
}
