import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where Genesis keeps its own files for a repository (indexes, the ledger's journal): `genesis/`
 * inside its git directory, which no work tree or mirror clone carries. A bare repository is its
 * own git directory.
 */
export async function genesisStateDir(repo: string): Promise<string> {
  const dotGit = join(repo, '.git');
  const hasDotGit = await stat(dotGit).then(
    (s) => s.isDirectory(),
    () => false,
  );
  return join(hasDotGit ? dotGit : repo, 'genesis');
}
