import { rm } from 'node:fs/promises';
import { git, gitValue } from './git.js';

export type MergeResult = { clean: true; tree: string } | { clean: false; conflicts: string[] };

/**
 * Replays a candidate on a newer head without a working tree: a real three-way merge in the
 * object store (merge base = the candidate's base, since the accepted branch only moves forward).
 * Concurrent appends to the world's progress file are the one conflict resolved here: both sides'
 * additions are kept, the head's first.
 */
export async function mergeTrees(repo: string, head: string, candidate: string, progressFile?: string): Promise<MergeResult> {
  const r = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', head, candidate], { cwd: repo, okExitCodes: [1] });
  const lines = r.stdout.split('\n').filter(Boolean);
  if (r.exitCode === 0) return { clean: true, tree: lines[0]! };
  const conflicts = [...new Set(lines.slice(1))];
  if (progressFile && conflicts.length === 1 && conflicts[0] === progressFile) {
    return { clean: true, tree: await unionProgress(repo, head, candidate, progressFile, lines[0]!) };
  }
  return { clean: false, conflicts };
}

async function unionProgress(repo: string, head: string, candidate: string, file: string, mergedTree: string): Promise<string> {
  const base = (await gitValue(['merge-base', head, candidate], { cwd: repo })).trim();
  const read = async (rev: string) => (await git(['cat-file', 'blob', `${rev}:${file}`], { cwd: repo, okExitCodes: [128] })).stdout;
  const [baseText, headText, candText] = await Promise.all([read(base), read(head), read(candidate)]);
  const added = candText.startsWith(baseText) ? candText.slice(baseText.length) : candText;
  const text = `${headText}${headText.endsWith('\n') || headText === '' ? '' : '\n'}${added}`;
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: text });
  const env = { GIT_INDEX_FILE: `${repo}/genesis-merge-${process.pid}.index` };
  await git(['read-tree', mergedTree], { cwd: repo, env });
  await git(['update-index', '--cacheinfo', `100644,${blob},${file}`], { cwd: repo, env });
  const tree = await gitValue(['write-tree'], { cwd: repo, env });
  await rm(env.GIT_INDEX_FILE, { force: true });
  return tree;
}
