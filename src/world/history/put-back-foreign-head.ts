import { readAcceptedHistory } from './accepted-history.js';
import { commitOrigin } from './commit-origin.js';
import { readAdoption } from './adoption.js';
import type { WorldRepo } from '../world-repo.js';

export interface PutBack {
  /** The head found on the branch, which no part of Genesis made. */
  foreign: string;
  /** The newest commit Genesis made, where the branch is now. */
  restored: string;
  /** Where the foreign commit is kept. */
  quarantine: string;
}

/**
 * What a running integrator does to a move it did not make, done at the start of a run for a
 * move made between runs (a `git push` to the accepted branch): when the head and the commits
 * under it were made outside Genesis (no Genesis-Episode, Genesis-Amend or task-add trailers),
 * the branch goes back, by compare-and-swap, to the newest commit Genesis made, and the head is
 * kept under `refs/genesis/quarantine/`. An unattributed commit that later commits built on is
 * left for `genesis audit` to report. Null when the head is Genesis's own.
 */
export async function putBackForeignHead(world: WorldRepo, branch: string): Promise<PutBack | null> {
  const history = await readAcceptedHistory(world.path, branch);
  // An adopted world's first accepted commit is Genesis's own even when it is the repository's head.
  const adopted = (await readAdoption(world.path))?.commit;
  const own = history.findIndex((c) => c.commit === adopted || commitOrigin(c) !== 'unattributed');
  if (own <= 0) return null;
  const foreign = history[0]!.commit;
  const restored = history[own]!.commit;
  const quarantine = `refs/genesis/quarantine/foreign-${new Date().toISOString().replace(/[-:.]/g, '')}-${foreign.slice(0, 12)}`;
  await world.setRef(quarantine, foreign);
  if (!(await world.compareAndSwap(`refs/heads/${branch}`, restored, foreign))) return putBackForeignHead(world, branch);
  return { foreign, restored, quarantine };
}
