import { git } from './git.js';

export type MergeResult = { clean: true; tree: string } | { clean: false; conflicts: string[] };

/**
 * Replays a candidate on a newer head without a working tree: a real three-way merge in the
 * object store (merge base = the candidate's base, since the accepted branch only moves forward).
 */
export async function mergeTrees(repo: string, head: string, candidate: string): Promise<MergeResult> {
  const r = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', head, candidate], { cwd: repo, okExitCodes: [1] });
  const lines = r.stdout.split('\n').filter(Boolean);
  if (r.exitCode === 0) return { clean: true, tree: lines[0]! };
  return { clean: false, conflicts: [...new Set(lines.slice(1))] };
}
