import { rm } from 'node:fs/promises';
import { git, gitValue } from '../git.js';

/**
 * A tree like `tree` with some files put in (text) or taken out (null), written with a private
 * index so nothing else of the repository is touched: how a manifest is laid over a tree that
 * never had one (an adopted history), or one file of a tree is changed (a mutant).
 */
export async function overlayFiles(repo: string, tree: string, files: Readonly<Record<string, string | null>>, indexFile: string): Promise<string> {
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    await git(['read-tree', tree], { cwd: repo, env });
    for (const [path, content] of Object.entries(files)) {
      if (content === null) {
        await git(['update-index', '--force-remove', '--', path], { cwd: repo, env });
        continue;
      }
      const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: content });
      // A file's mode is kept when it exists (an executable script stays one).
      const listed = (await git(['ls-files', '-s', '--', path], { cwd: repo, env })).stdout.trim();
      const mode = listed.startsWith('100755') ? '100755' : '100644';
      await git(['update-index', '--add', '--cacheinfo', `${mode},${blob},${path}`], { cwd: repo, env });
    }
    return await gitValue(['write-tree'], { cwd: repo, env });
  } finally {
    await rm(indexFile, { force: true });
  }
}
