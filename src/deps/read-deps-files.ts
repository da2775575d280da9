import { execa } from 'execa';
import { GenesisError } from '../errors/genesis-error.js';
import { git } from '../git/git.js';
import { normalizeTreePath } from '../manifest/deps-rules.js';

export interface DepsFile {
  path: string;
  /** null when the tree has no such file. */
  content: Buffer | null;
  /** git mode, e.g. 100644; null when absent. */
  mode: string | null;
}

/**
 * The files of `verify.deps.files` as they are in `tree`, read from git (never from a working
 * copy an agent can touch). A path that is a directory or a symlink there is an error: only a
 * regular file defines dependencies.
 */
export async function readDepsFiles(repo: string, tree: string, files: readonly string[]): Promise<DepsFile[]> {
  const paths = files.map(normalizeTreePath);
  const listing = (await git(['ls-tree', '-z', '--full-tree', tree, '--', ...paths], { cwd: repo })).stdout;
  const modes = new Map<string, { mode: string; type: string; sha: string }>();
  for (const line of listing.split('\0').filter(Boolean)) {
    const tab = line.indexOf('\t');
    const [mode = '', type = '', sha = ''] = line.slice(0, tab).split(' ');
    modes.set(line.slice(tab + 1), { mode, type, sha });
  }
  const out: DepsFile[] = [];
  for (const path of paths) {
    const entry = modes.get(path);
    if (!entry) {
      out.push({ path, content: null, mode: null });
      continue;
    }
    if (entry.type !== 'blob' || entry.mode === '120000') {
      throw new GenesisError(
        'deps-file-invalid',
        `verify.deps.files names ${path}, which is ${entry.mode === '120000' ? 'a symlink' : 'a directory'} in tree ${tree.slice(0, 12)}`,
        {
          hint: 'list regular files only (lockfiles such as package-lock.json or requirements.txt)',
        },
      );
    }
    const blob = await execa('git', ['cat-file', 'blob', entry.sha], { cwd: repo, encoding: 'buffer' });
    out.push({ path, content: Buffer.from(blob.stdout), mode: entry.mode });
  }
  return out;
}

/** The error for files that a tree lacks, naming each one and the fix. */
export function missingDepsFilesError(missing: readonly string[], where: string): GenesisError {
  return new GenesisError(
    'deps-file-missing',
    `verify.deps.files names ${missing.map((m) => `"${m}"`).join(', ')}, which ${missing.length === 1 ? 'does' : 'do'} not exist in ${where}`,
    {
      hint: 'commit the file (e.g. run `npm install` once to write package-lock.json), or remove it from verify.deps.files',
    },
  );
}
