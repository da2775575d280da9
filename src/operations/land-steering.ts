import type { WorldRepo } from '../world/world-repo.js';

/**
 * Moves the accepted branch from `expected` to a person's verified `commit`; false when it is no
 * longer at `expected`. Between runs, a compare-and-swap under the run lock; in a running world,
 * the run's lander, between two landings, so the branch keeps one writer.
 */
export type LandSteering = (commit: string, expected: string) => Promise<boolean>;

/** The landing between runs: the caller holds the run lock, so no integrator is running. */
export function landByCompareAndSwap(world: WorldRepo, branch: string): LandSteering {
  return (commit, expected) => world.compareAndSwap(`refs/heads/${branch}`, commit, expected);
}
