import { mkdir } from 'node:fs/promises';
import { execa } from 'execa';
import { GenesisError } from '../../errors/genesis-error.js';
import { git, gitValue, SAFE_GIT_ENV } from '../git.js';
import { resolveObject } from '../object-reader.js';
import { matchesAny } from '../../manifest/path-patterns.js';
import { diffTrees } from './walk.js';
import { writeSmallTree } from './write-small.js';

/**
 * Writes a tree's tracked content into `dir`, and nothing else: no .git, no ignored files an
 * agent may have left beside its change. This is what the gate's sandbox sees. Resolves
 * 'stamped' when every entry got `mtime` (a small tree, written here), 'archived' when git
 * archive and tar wrote it (every entry stamped with the time of the archive).
 */
export async function exportTree(repo: string, tree: string, dir: string, mtime?: Date): Promise<'stamped' | 'archived'> {
  await mkdir(dir, { recursive: true });
  // Most gate trees are small: written here with no process (git archive, tar and the pipe cost ~15 ms a gate); larger ones stream.
  const written = await writeSmallTree(repo, tree, dir, mtime).catch((cause: unknown) => {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new GenesisError('export-failed', `could not write tree ${tree.slice(0, 12)} into the gate's work dir: ${why.replaceAll(dir, '<work dir>')}`, {
      hint: 'check free disk space and permissions of the world directory',
      cause,
    });
  });
  if (written) return 'stamped';
  // The archive streams from git to tar: never buffered here, whatever the size of the tree.
  const result = await execa('git', ['archive', '--format=tar', tree], { cwd: repo, env: SAFE_GIT_ENV, reject: false, buffer: { stdout: false } }).pipe(
    'tar',
    ['-x', '-f', '-', '-C', dir, '--no-same-owner'],
    { reject: false },
  );
  if (result.exitCode !== 0 || (result.pipedFrom[0]?.exitCode ?? 0) !== 0) {
    const stderr = [result.pipedFrom[0]?.stderr, result.stderr]
      .map((e) => String(e ?? '').trim())
      .filter(Boolean)
      .join('; ');
    // No host path in the message: it reaches the ledger and the next prompt.
    throw new GenesisError(
      'export-failed',
      `could not write tree ${tree.slice(0, 12)} into the gate's work dir: ${stderr.slice(-400).replaceAll(dir, '<work dir>')}`,
      {
        hint: 'check free disk space and permissions of the world directory',
      },
    );
  }
  return 'archived';
}

interface TreeEntry {
  mode: string;
  sha: string;
  path: string;
}

async function listTree(repo: string, treeish: string): Promise<TreeEntry[]> {
  const out = (await git(['ls-tree', '-r', '-z', '--full-tree', treeish], { cwd: repo })).stdout;
  return out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode = '', , sha = ''] = line.slice(0, tab).split(' ');
      return { mode, sha, path: line.slice(tab + 1) };
    });
}

/**
 * The tree the gate verifies: the candidate's files, with every protected path taken from the
 * accepted head (acceptance tests and the manifest can never come from a candidate).
 */
export async function withProtectedFrom(
  repo: string,
  candidateTree: string,
  head: string,
  protectedPaths: readonly string[],
  indexFile: string,
): Promise<string> {
  // Mostly the candidate leaves every protected path as the head has it: seen from the trees that differ, with no process.
  const headTree = await resolveObject(repo, `${head}^{tree}`);
  if (headTree && !(await diffTrees(repo, headTree.sha, candidateTree)).some((c) => matchesAny(c.path, protectedPaths))) return candidateTree;
  const [cand, accepted] = await Promise.all([listTree(repo, candidateTree), listTree(repo, head)]);
  const isProtected = (e: TreeEntry) => matchesAny(e.path, protectedPaths);
  const key = (entries: TreeEntry[]) =>
    entries
      .filter(isProtected)
      .map((e) => `${e.mode} ${e.sha} ${e.path}`)
      .sort()
      .join('\n');
  if (key(cand) === key(accepted)) return candidateTree;
  const entries = [...cand.filter((e) => !isProtected(e)), ...accepted.filter(isProtected)];
  const env = { GIT_INDEX_FILE: indexFile };
  await git(['read-tree', '--empty'], { cwd: repo, env });
  await git(['update-index', '-z', '--index-info'], {
    cwd: repo,
    env,
    input: entries.map((e) => `${e.mode} ${e.sha}\t${e.path}\0`).join(''),
  });
  return gitValue(['write-tree'], { cwd: repo, env });
}
