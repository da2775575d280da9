import { Queue } from 'bullmq';
import type { Hono } from 'hono';
import { EPISODE_QUEUE, queuePrefix, resultQueueOf, worldKeyOf } from '../../../queue/bullmq/distributed-job.js';
import { connectRedis } from '../../../queue/redis/connection.js';
import { listWorkers } from '../../../queue/redis/worker-registry.js';
import { mountQueueBoard, readQueueDepths } from '../../../server/queue-board.js';
import type { QueueDepth } from '../../../server/projections/world-metrics.js';
import type { ClusterWorker } from '../../../server/projections/worker-liveness.js';
import type { WorldRepo } from '../../../world/world-repo.js';

/**
 * The queues `genesis run --redis` uses for this world: the shared episode queue and the world's
 * results queue, named exactly as src/cli/commands/run/distributed.ts names them; and the
 * workers alive in the registry, for the overview.
 */
export async function openQueueBoard(
  url: string,
  world: WorldRepo,
): Promise<{ mount(app: Hono): void; listWorkers(): Promise<ClusterWorker[]>; queueDepths(): Promise<QueueDepth[]>; close(): Promise<void> }> {
  const manifest = await world.manifestAt('HEAD');
  const redis = await connectRedis(url, { name: 'genesis-serve' });
  const prefix = queuePrefix();
  const queues = [EPISODE_QUEUE, resultQueueOf(worldKeyOf(manifest.name, world.path))].map((name) => new Queue(name, { connection: redis, prefix }));
  return {
    mount: (app) => void mountQueueBoard(app, queues),
    listWorkers: () => listWorkers(redis),
    queueDepths: () => readQueueDepths(queues),
    close: async () => {
      await Promise.all(queues.map((q) => q.close()));
      redis.disconnect();
    },
  };
}
