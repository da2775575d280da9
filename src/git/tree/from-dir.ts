import { rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import { git, gitValue } from '../git.js';

/**
 * Writes a working directory into the world's object store as a tree, as `git add --all` would:
 * its `.git` (if any) is never read, its own `.gitignore` files are honoured, and neither the
 * user's global excludes nor the world's own `info/exclude` hide anything of it.
 */
export async function writeTreeFromDir(repo: string, dir: string, indexFile: string): Promise<string> {
  const from = resolve(dir);
  if (
    !(await stat(from).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new GenesisError('from-not-a-directory', `--from ${dir} is not a directory`, {
      hint: 'pass the working tree that should become the next accepted tree',
    });
  }
  const env = { GIT_INDEX_FILE: indexFile };
  const ctx = ['--git-dir', repo, '--work-tree', from, '-c', 'core.excludesFile=/dev/null', '-c', 'core.autocrlf=false'];
  try {
    await rm(indexFile, { force: true });
    await git([...ctx, 'add', '--all', '--', '.'], { cwd: from, env });
    return await gitValue([...ctx, 'write-tree'], { cwd: from, env });
  } finally {
    await rm(indexFile, { force: true });
  }
}
