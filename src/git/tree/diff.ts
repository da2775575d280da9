import { gitHead } from '../git.js';
import { readText, resolveObject } from '../object-reader.js';
import { diffTrees } from './walk.js';

/** One path of a candidate's change, as git's diff of base and candidate reports it. */
export interface ChangedEntry {
  /** Repo-relative, '/'-separated, already unquoted. */
  path: string;
  change: 'added' | 'modified' | 'deleted' | 'type-changed';
  /** The new git mode ('100644', '100755', '120000' symlink, '160000' gitlink); '' when deleted. */
  mode: string;
  /** The new blob's size in bytes; 0 when deleted. */
  size: number;
  /** For mode 120000: the link's target text. */
  symlinkTarget?: string;
  /** For a regular file modified in place: its blob's size on the base tree (what the pre-gate measures growth from). */
  baseSize?: number;
}

const STATUS: Record<string, ChangedEntry['change']> = { A: 'added', M: 'modified', D: 'deleted', T: 'type-changed' };

/** What changed between two trees, with each new blob's mode, size and (for symlinks) target. No git process (tree-walk.ts). */
export async function listChanges(repo: string, fromTree: string, toTree: string): Promise<ChangedEntry[]> {
  const entries: Array<ChangedEntry & { sha: string; oldSha: string }> = (await diffTrees(repo, fromTree, toTree)).map((c) => {
    const change = STATUS[c.status] ?? 'modified';
    // Only a regular file's content grows in place; its old blob is the one to measure from.
    const oldSha = change === 'modified' && REGULAR.has(c.oldMode) && REGULAR.has(c.newMode) ? c.oldSha : '';
    return { path: c.path, change, mode: change === 'deleted' ? '' : c.newMode, size: 0, sha: c.newSha, oldSha };
  });
  await fillSizesAndTargets(repo, entries);
  return entries.map(({ sha: _sha, oldSha: _oldSha, ...entry }) => entry);
}

const REGULAR = new Set(['100644', '100755']);

async function fillSizesAndTargets(repo: string, entries: Array<ChangedEntry & { sha: string; oldSha: string }>): Promise<void> {
  const blobs = entries.filter((e) => e.change !== 'deleted' && e.mode !== '160000');
  const sizes = await Promise.all(blobs.map((e) => resolveObject(repo, e.sha)));
  blobs.forEach((entry, i) => {
    entry.size = sizes[i]?.size ?? 0;
  });
  const grown = entries.filter((e) => e.oldSha !== '');
  const baseSizes = await Promise.all(grown.map((e) => resolveObject(repo, e.oldSha)));
  grown.forEach((entry, i) => {
    entry.baseSize = baseSizes[i]?.size ?? 0;
  });
  // A link target longer than PATH_MAX is no path at all: left unread, the pre-gate rejects the link.
  for (const link of blobs.filter((e) => e.mode === '120000' && e.size <= MAX_LINK_TARGET)) {
    link.symlinkTarget = (await readText(repo, link.sha)) ?? '';
  }
}

const MAX_LINK_TARGET = 4096;

/**
 * A unified diff between two trees, cut at `maxBytes` so a huge change cannot bloat the ledger nor
 * the orchestrator's memory: blobs larger than the cut are left out by pathspec (their sizes come
 * from listChanges, without reading them), and git's output is read only up to the cut.
 */
export async function diffText(repo: string, fromTree: string, toTree: string, maxBytes = 2 * 1024 * 1024): Promise<string> {
  const large = (await listChanges(repo, fromTree, toTree)).filter((e) => e.size > maxBytes);
  const excludes = large.map((e) => `:(exclude,literal)${e.path}`);
  const args = ['diff', '--no-color', '--no-ext-diff', '--binary', '--no-renames', fromTree, toTree, '--', ...(excludes.length > 0 ? ['.', ...excludes] : [])];
  const { text, cut } = await gitHead(args, { cwd: repo }, maxBytes);
  const left = large.map((e) => `[${e.path}: ${e.size} bytes, left out of the diff]`).join('\n');
  return `${cut ? `${text}\n[diff cut at ${maxBytes} bytes]\n` : text}${left ? `${left}\n` : ''}`;
}
