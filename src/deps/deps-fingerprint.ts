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
 */
export async function summarizeTree(root: string): Promise<TreeSummary> {
  const hash = createHash('sha256');
  let entries = 0;
  let bytes = 0;
  const walk = async (dir: string, rel: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const path = join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      const info = await lstat(path);
      entries++;
      bytes += info.blocks * 512;
      const type = info.isDirectory() ? 'd' : info.isSymbolicLink() ? 'l' : 'f';
      const target = type === 'l' ? await readlink(path) : '';
      hash.update(`${relPath}\0${type}\0${info.size}\0${info.mode}\0${Math.floor(info.mtimeMs)}\0${target}\n`);
      if (type === 'd') await walk(path, relPath);
    }
  };
  await walk(root, '');
  return { fingerprint: hash.digest('hex'), entries, bytes };
}
