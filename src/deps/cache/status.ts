import { access, constants, mkdir } from 'node:fs/promises';
import type { DepsCache } from './cache.js';

export interface DepsCacheStatus {
  root: string;
  writable: boolean;
  /** Why it cannot be written, when it cannot. */
  problem: string | null;
  sets: number;
  bytes: number;
  capBytes: number;
}

/** What `genesis doctor` and `genesis deps` say about the cache: where, how full, whether usable. */
export async function readDepsCacheStatus(cache: DepsCache): Promise<DepsCacheStatus> {
  let problem: string | null = null;
  try {
    await mkdir(cache.root, { recursive: true });
    await access(cache.root, constants.W_OK);
  } catch (error) {
    problem = (error as Error).message;
  }
  const sets = await cache.list();
  return {
    root: cache.root,
    writable: problem === null,
    problem,
    sets: sets.length,
    bytes: sets.reduce((sum, s) => sum + s.bytes, 0),
    capBytes: cache.capBytes,
  };
}

/** Bytes as MiB with one decimal. */
export function formatMb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
