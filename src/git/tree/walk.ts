import { GenesisError } from '../../errors/genesis-error.js';
import { readObject } from '../object-reader.js';
import { parseTree, type StoredTreeEntry } from './entries.js';

/** One path that differs between two trees, as `git diff-tree -r --no-renames --raw` reports it. */
export interface TreeChange {
  path: string;
  /** A added, D deleted, M modified (content or executable bit), T type changed (file, symlink, submodule). */
  status: 'A' | 'D' | 'M' | 'T';
  oldMode: string;
  newMode: string;
  /** The new object's id; '' when deleted. */
  newSha: string;
  /** The old object's id; '' when added. */
  oldSha: string;
}

const TREE = '40000';

/**
 * What differs between two trees, file by file, read through the world's long-lived cat-file
 * (object-reader.ts): no process, and only the subtrees that differ are read, so a small change
 * costs a few lookups whatever the size of the tree. Paths in git's order.
 */
export async function diffTrees(repo: string, from: string, to: string): Promise<TreeChange[]> {
  const out: TreeChange[] = [];
  await walk(repo, from, to, '', out);
  return out;
}

async function entriesOf(repo: string, tree: string | null): Promise<StoredTreeEntry[]> {
  if (tree === null) return [];
  const found = await readObject(repo, tree);
  if (found?.type !== 'tree')
    throw new GenesisError('git-failed', `${tree.slice(0, 40)} is not a tree in the world`, { hint: 'check that the tree exists in the world' });
  return parseTree(found.content);
}

async function walk(repo: string, from: string | null, to: string | null, prefix: string, out: TreeChange[]): Promise<void> {
  if (from === to) return;
  const [a, b] = await Promise.all([entriesOf(repo, from), entriesOf(repo, to)]);
  // Git orders entries by name, a tree's as if it ended in '/': a file "a" and a tree "a" are two
  // entries far apart ("a" < "a-b" < "a/"), each compared with its own kind on the other side.
  const slot = (e: StoredTreeEntry) => (e.mode === TREE ? `${e.name}/` : e.name);
  const before = new Map(a.map((e) => [slot(e), e]));
  const after = new Map(b.map((e) => [slot(e), e]));
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  for (const key of keys) {
    const old = before.get(key);
    const neu = after.get(key);
    if (old && neu && old.sha === neu.sha && old.mode === neu.mode) continue;
    const path = `${prefix}${(old ?? neu)!.name}`;
    if (key.endsWith('/')) await walk(repo, old?.sha ?? null, neu?.sha ?? null, `${path}/`, out);
    else if (!old) out.push({ path, status: 'A', oldMode: '000000', newMode: neu!.mode, newSha: neu!.sha, oldSha: '' });
    else if (!neu) out.push({ path, status: 'D', oldMode: old.mode, newMode: '000000', newSha: '', oldSha: old.sha });
    else out.push({ path, status: kindOf(old.mode) === kindOf(neu.mode) ? 'M' : 'T', oldMode: old.mode, newMode: neu.mode, newSha: neu.sha, oldSha: old.sha });
  }
}

function kindOf(mode: string): string {
  if (mode === '120000') return 'link';
  if (mode === '160000') return 'submodule';
  return 'file';
}
