import { isAlive } from '../world/run-lock.js';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { WorldRepo } from '../world/world-repo.js';

/**
 * Who runs the world right now, in words, or null when nobody does: an embedded `genesis run`
 * holding the world's lock file on this machine, or (when Redis is given) a distributed run
 * holding the world's integrator lock. Episodes recorded as running are expected while one does.
 */
export async function findRunHolder(world: WorldRepo, name: string, redisUrl?: string): Promise<string | null> {
  const local = await localHolder(world);
  if (local) return local;
  if (!redisUrl) return null;
  // Loaded only when asked for: most audits have no Redis, and ioredis is slow to load.
  const [{ connectRedis }, { IntegratorLock }, { worldKeyOf }] = await Promise.all([
    import('../queue/redis-connection.js'),
    import('../queue/integrator-lock.js'),
    import('../queue/distributed-job.js'),
  ]);
  const redis = await connectRedis(redisUrl, { name: 'genesis-audit' });
  try {
    const holder = await IntegratorLock.readHolder(redis, worldKeyOf(name, world.path));
    return holder ? `a distributed genesis run on ${holder.owner.host} (pid ${holder.owner.pid})` : null;
  } finally {
    redis.disconnect();
  }
}

async function localHolder(world: WorldRepo): Promise<string | null> {
  const text = await readFile(join(world.scratchDir, 'run.lock'), 'utf8').catch(() => null);
  if (text === null) return null;
  const [host = '', pid = ''] = text.trim().split(' ');
  // A lock file left by a dead process on this machine holds nothing; one from elsewhere we cannot test.
  if (host === hostname() && !isAlive(Number(pid))) return null;
  return `genesis run on ${host} (pid ${pid})`;
}
