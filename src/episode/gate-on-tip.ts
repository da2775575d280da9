import { mergeTrees } from '../world/merge-tree.js';
import type { WorldRepo } from '../world/world-repo.js';

/** What an episode's gate judges: the change on `onto`, as the tree `tree` and the commit `commit` (whose parent is `onto`). */
export interface GateTarget {
  onto: string;
  tree: string;
  commit: string;
}

/**
 * Issue 18 item 4: when the accepted head (with the changes queued to land before this one) has
 * moved while the agent worked, the episode gates its change on that speculative tip instead of
 * its stale base. If nothing changes ahead of it, the change then lands with no second gate.
 * Returns null when the change does not merge cleanly there (the queue rejects it when it joins)
 * or the tip is the base already.
 */
export async function targetOnTip(world: WorldRepo, base: string, candidate: string, tip: string | null, progressFile: string | undefined, message: string): Promise<GateTarget | null> {
  if (tip === null || tip === base) return null;
  const merged = await mergeTrees(world.path, tip, candidate, progressFile);
  if (!merged.clean) return null;
  return { onto: tip, tree: merged.tree, commit: await world.commitTree(merged.tree, [tip], message) };
}
