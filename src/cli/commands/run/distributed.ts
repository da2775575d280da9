import { hostname } from 'node:os';
import { BullmqEpisodeQueue } from '../../../queue/bullmq/episode-queue.js';
import { BullmqVerificationQueue } from '../../../queue/bullmq/verification-queue.js';
import { worldKeyOf } from '../../../queue/bullmq/distributed-job.js';
import { IntegratorLock } from '../../../queue/redis/integrator-lock.js';
import { connectRedis } from '../../../queue/redis/connection.js';
import { RedisPathLeases } from '../../../queue/redis/path-leases.js';
import { RedisWaitChannel } from '../../../queue/redis/wait-channel.js';
import { RedisTipServer } from '../../../queue/redis/tip-broker.js';
import { isGitUrl } from '../../../world/worker-world.js';
import type { ClusterAdapters } from '../../../compose/cluster-run.js';
import type { WorldRepo } from '../../../world/world-repo.js';

/**
 * The composition root of a distributed run: the integrator lock (exactly one scheduler per
 * world), the BullMQ queue and the Redis path leases. Losing the lock stops the run.
 */
export async function joinCluster(
  url: string,
  world: WorldRepo,
  name: string,
  remote: string,
  onLockLost: () => void,
): Promise<{ distributed: ClusterAdapters; leave(): Promise<void> }> {
  const redis = await connectRedis(url, { name: 'genesis-scheduler' });
  const worldKey = worldKeyOf(name, world.path);
  let lock: IntegratorLock;
  try {
    lock = await IntegratorLock.acquire(redis, worldKey, { owner: { host: hostname(), pid: process.pid }, ttlMs: envMs('GENESIS_INTEGRATOR_TTL_MS') });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  lock.onLost((loss) => {
    const why =
      loss.reason === 'taken'
        ? `${loss.holder.owner.host} pid ${loss.holder.owner.pid} holds it now`
        : loss.reason === 'expired'
          ? 'it expired in Redis (a Redis restart, or a pause longer than its ttl)'
          : 'no refresh reached Redis within its ttl (Redis down or restarting)';
    process.stderr.write(`genesis: the integrator lock was lost: ${why}; stopping (run genesis run again to resume)\n`);
    onLockLost();
  });
  // Workers on the world's own storage ask for their change's place before gating;
  // behind a git URL their candidates are not in the scheduler's object store yet, so they gate on their base.
  const tips = isGitUrl(remote) ? null : new RedisTipServer(redis, worldKey);
  const queue = new BullmqEpisodeQueue(
    redis,
    { remote, worldKey, tips: tips !== null },
    { lockDurationMs: envMs('GENESIS_LOCK_MS'), stalledIntervalMs: envMs('GENESIS_STALLED_MS') },
  );
  const leases = new RedisPathLeases(redis, worldKey);
  // Gates of speculative commits run on the workers, as episodes do.
  const verifications = new BullmqVerificationQueue(
    redis,
    { remote, worldKey },
    { lockDurationMs: envMs('GENESIS_LOCK_MS'), stalledIntervalMs: envMs('GENESIS_STALLED_MS') },
  );
  return {
    distributed: {
      queue,
      leases,
      verifications,
      reconcileMs: envMs('GENESIS_RECONCILE_MS') ?? 5_000,
      waits: new RedisWaitChannel(redis, worldKey),
      ...(tips ? { tips } : {}),
    },
    async leave() {
      await tips?.close();
      await lock.release();
      redis.disconnect();
    },
  };
}

function envMs(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined ? undefined : Number(value);
}
