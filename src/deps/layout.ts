import { join } from 'node:path';

/** One top-level entry of a prepared output, as read from the cache. */
export interface OutputEntry {
  name: string;
  type: 'dir' | 'file' | 'link';
  /** A link's target, as stored. */
  linkTarget?: string;
}

/** How a prepared set appears in a gate's work dir or a workspace. */
export interface DepsLayout {
  /** Directories to create, writable (each output path that is a directory). */
  dirs: string[];
  /** Read-only views: `source` in the cache appears at `target`, relative to the work dir. */
  mounts: Array<{ source: string; target: string }>;
  /** Symbolic links to recreate as they are (relative links such as pnpm's stay inside the output). */
  links: Array<{ target: string; linkTarget: string }>;
}

/**
 * Lays a prepared set out in a tree. Pure. Each output directory (node_modules) becomes a real,
 * writable directory whose entries are read-only views of the cache, so tools that keep caches
 * inside it (vitest's node_modules/.vite, babel's .cache) still work and the packages themselves
 * cannot be changed; a link at the top is recreated as the same link; an output that is a file
 * is viewed whole.
 */
export function planDepsLayout(
  outDir: string,
  outputs: ReadonlyArray<{ path: string; type: 'dir' | 'file' | 'link'; entries: readonly OutputEntry[] }>,
): DepsLayout {
  const layout: DepsLayout = { dirs: [], mounts: [], links: [] };
  for (const output of outputs) {
    if (output.type !== 'dir') {
      layout.mounts.push({ source: join(outDir, output.path), target: output.path });
      continue;
    }
    layout.dirs.push(output.path);
    for (const entry of [...output.entries].sort((a, b) => a.name.localeCompare(b.name))) {
      const target = `${output.path}/${entry.name}`;
      if (entry.type === 'link') layout.links.push({ target, linkTarget: entry.linkTarget ?? '' });
      else layout.mounts.push({ source: join(outDir, output.path, entry.name), target });
    }
  }
  return layout;
}
