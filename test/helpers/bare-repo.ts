import { join } from 'node:path';
import { git, gitValue } from '../../src/git/git.js';
import { tempDir } from './temp-dir.js';

/** A bare repository in a new temporary directory, its main branch one commit of the empty tree. */
export async function bareRepoWithCommit(prefix: string): Promise<{ dir: string; repo: string; head: string }> {
  const dir = await tempDir(prefix);
  const repo = join(dir, 'w.git');
  await git(['init', '--quiet', '--bare', repo], { cwd: dir });
  const tree = await gitValue(['mktree'], { cwd: repo, input: '' });
  const head = await gitValue(['commit-tree', tree], { cwd: repo, input: 'first\n' });
  await git(['update-ref', 'refs/heads/main', head], { cwd: repo });
  return { dir, repo, head };
}
