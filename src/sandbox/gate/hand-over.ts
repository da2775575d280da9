import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Past this many entries a tree is handed over by `find … -exec chown` (or `chown -R`): one process that walks it faster than Node. */
const MAX_ENTRIES = 2000;

/**
 * Hands a small tree to `user` from this process (prepareWorkDir's hand-over without its `find`
 * and `chown` processes): the entries not yet owned by `user`, as `find` picks them (a chown
 * bumps ctime, and git would then re-hash a workspace), links themselves and never their targets
 * (a directory is entered only when readdir says it is one, never through a link). Resolves
 * 'too-large', having changed nothing, for a tree of more than MAX_ENTRIES entries, and 'failed'
 * when an entry could not be read or changed.
 */
export async function handOverSmallTree(tree: string, user: { uid: number; gid: number }): Promise<'handed-over' | 'too-large' | 'failed'> {
  const entries: string[] = [tree];
  const dirs: string[] = [tree];
  while (dirs.length > 0) {
    const dir = dirs.pop()!;
    try {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        entries.push(path);
        if (entry.isDirectory()) dirs.push(path);
      }
    } catch {
      return 'failed';
    }
    if (entries.length > MAX_ENTRIES) return 'too-large';
  }
  const results = await Promise.allSettled(
    entries.map(async (path) => {
      const info = await lstat(path);
      if (info.uid !== user.uid || info.gid !== user.gid) await lchown(path, user.uid, user.gid);
    }),
  );
  return results.every((r) => r.status === 'fulfilled') ? 'handed-over' : 'failed';
}
