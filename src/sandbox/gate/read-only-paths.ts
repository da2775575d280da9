import { posix } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';

/** The mounts that make `readOnlyPaths` hold: directories to pin (bound over themselves), then the read-only paths. */
export interface ReadOnlyMounts {
  /** Directories between the work dir and a read-only path, parents first. */
  pinned: string[];
  /** The read-only paths, normalized, parents first. */
  readOnly: string[];
}

const depth = (path: string): number => path.split('/').length;
const byDepth = (a: string, b: string): number => depth(a) - depth(b) || a.localeCompare(b);

/**
 * Normalizes the read-only paths of a run spec and lists the directories to pin. A path that
 * leaves the work dir is a caller's bug, not input to tolerate.
 */
export function planReadOnlyMounts(paths: readonly string[] | undefined): ReadOnlyMounts {
  const readOnly = new Set<string>();
  for (const raw of paths ?? []) {
    const path = posix.normalize(raw).replace(/\/+$/, '');
    if (path === '.' || path === '' || path.startsWith('/') || path === '..' || path.startsWith('../')) {
      throw new GenesisError('sandbox-read-only-path', `read-only path ${JSON.stringify(raw)} is not inside the work dir`);
    }
    readOnly.add(path);
  }
  // A path under another read-only path is covered already, and binding into a read-only
  // directory would need a mount point there.
  const kept = [...readOnly].filter((p) => ![...readOnly].some((q) => q !== p && p.startsWith(`${q}/`)));
  const pinned = new Set<string>();
  for (const path of kept) {
    for (let dir = posix.dirname(path); dir !== '.'; dir = posix.dirname(dir)) pinned.add(dir);
  }
  return { pinned: [...pinned].sort(byDepth), readOnly: kept.sort(byDepth) };
}
