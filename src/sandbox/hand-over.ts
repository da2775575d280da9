import { lchown, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxUser } from './work-dir.js';

/** Past this many entries a tree is handed over by `chown -R`, one process that walks it faster than Node. */
const MAX_ENTRIES = 2000;

/**
 * Hands a small tree to `user` from this process (prepareWorkDir's hand-over without its `find`
 * and `chown` processes): every entry, links themselves and never their targets (a directory is
 * entered only when readdir says it is one, never through a link). Resolves 'too-large', having
 * changed nothing, for a tree of more than MAX_ENTRIES entries, and 'failed' when an entry could
 * not be read or changed.
 */
export async function handOverSmallTree(tree: string, user: SandboxUser): Promise<'handed-over' | 'too-large' | 'failed'> {
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
  const results = await Promise.allSettled(entries.map((path) => lchown(path, user.uid, user.gid)));
  return results.every((r) => r.status === 'fulfilled') ? 'handed-over' : 'failed';
}
