import type { Run } from '../ports/state.js';

/** The accepted branch moved by something other than the lander is put back (and its commit quarantined). */
export async function guardBranch(run: Run): Promise<void> {
  const moved = await run.lander.guard();
  if (moved) run.emit({ type: 'foreign-move', commit: moved.foreign, quarantine: moved.quarantine });
}
