import { createHash } from 'node:crypto';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface TreeSummary {
  /** sha256 over every entry's path, type, size, mode and mtime (and a link's target). */
  fingerprint: string;
  /** Entries (files, directories, links). */
  entries: number;
  /** Bytes the entries take on disk. */
  bytes: number;
}

/**
 * Walks a prepared set and summarises it. Anything that changes a file's content, mode or
 * presence changes the fingerprint, so a set damaged after it was prepared (a tool that wrote
 * into it through a workspace link) is told apart from the one that was prepared.
 * `beforeReading` is called with each directory before its entries are read.
 */
export async function summarizeTree(root: string, beforeReading?: (dir: string) => void): Promise<TreeSummary> {
  let entries = 0;
  let bytes = 0;
  // Each directory's entries are read at once and its subdirectories walked side by side: the walk
  // costs a few round trips per level, not one per file. The lines are joined in sorted order.
  const walk = async (dir: string, rel: string): Promise<string[]> => {
    beforeReading?.(dir);
    const names = (await readdir(dir)).sort();
    const lines = await Promise.all(
      names.map(async (name): Promise<string[]> => {
        const path = join(dir, name);
        const relPath = rel ? `${rel}/${name}` : name;
        const info = await lstat(path);
        entries++;
        bytes += info.blocks * 512;
        const type = info.isDirectory() ? 'd' : info.isSymbolicLink() ? 'l' : 'f';
        const target = type === 'l' ? await readlink(path) : '';
        const line = `${relPath}\0${type}\0${info.size}\0${info.mode}\0${Math.floor(info.mtimeMs)}\0${target}\n`;
        return type === 'd' ? [line, ...(await walk(path, relPath))] : [line];
      }),
    );
    return lines.flat();
  };
  const hash = createHash('sha256');
  for (const line of await walk(root, '')) hash.update(line);
  return { fingerprint: hash.digest('hex'), entries, bytes };
}
