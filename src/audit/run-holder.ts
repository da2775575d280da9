import { isAlive } from '../sandbox/process/process-alive.js';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { WorldRepo } from '../world/world-repo.js';

/** Reads who holds the world's integrator lock, if anyone: the port a distributed run is seen through. */
export type ReadDistributedHolder = () => Promise<{ host: string; pid: number } | null>;

/**
 * Who runs the world right now, in words, or null when nobody does: an embedded `genesis run`
 * holding the world's lock file on this machine, or (when `distributed` is given) a distributed
 * run holding the world's integrator lock. Episodes recorded as running are expected while one does.
 */
export async function findRunHolder(world: WorldRepo, distributed?: ReadDistributedHolder): Promise<string | null> {
  const local = await localHolder(world);
  if (local) return local;
  const holder = distributed ? await distributed() : null;
  return holder ? `a distributed genesis run on ${holder.host} (pid ${holder.pid})` : null;
}

async function localHolder(world: WorldRepo): Promise<string | null> {
  const text = await readFile(join(world.scratchDir, 'run.lock'), 'utf8').catch(() => null);
  if (text === null) return null;
  const [host = '', pid = ''] = text.trim().split(' ');
  // A lock file left by a dead process on this machine holds nothing; one from elsewhere we cannot test.
  if (host === hostname() && !isAlive(Number(pid))) return null;
  return `genesis run on ${host} (pid ${pid})`;
}
