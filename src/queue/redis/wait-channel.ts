import type { Redis } from 'ioredis';
import { z } from 'zod';
import { queuePrefix } from '../bullmq/distributed-job.js';
import type { WorkerWait, WorkerWaitFeed } from '../worker-wait-feed.js';

const waitSchema = z.object({ id: z.string().min(1), task: z.string().min(1), what: z.string().min(1).nullable(), worker: z.string().min(1) }).strict();

const channelOf = (worldKey: string) => `${queuePrefix()}:waits:${worldKey}`;

/**
 * The worker's side: tells the world's scheduler of a wait over Redis pub/sub. A wait is news for
 * whoever watches now, so nothing is kept; a publish that fails (Redis restarting) is dropped
 * rather than holding up the episode.
 */
export async function tellWait(redis: Redis, worldKey: string, wait: WorkerWait): Promise<void> {
  await redis.publish(channelOf(worldKey), JSON.stringify(waitSchema.parse(wait))).catch(() => undefined);
}

/** The scheduler's side: the waits its world's jobs tell from the workers, each validated (anyone on the Redis can publish). */
export class RedisWaitChannel implements WorkerWaitFeed {
  constructor(
    private readonly redis: Redis,
    private readonly worldKey: string,
  ) {}

  async watch(onWait: (wait: WorkerWait) => void): Promise<() => Promise<void>> {
    // A subscribed connection can do nothing else: it is one of its own.
    const subscriber = this.redis.duplicate();
    const channel = channelOf(this.worldKey);
    subscriber.on('error', () => undefined);
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const parsed = waitSchema.safeParse(safeJson(message));
      if (parsed.success) onWait(parsed.data);
    });
    await subscriber.subscribe(channel);
    return async () => {
      await subscriber.unsubscribe(channel).catch(() => undefined);
      subscriber.disconnect();
    };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
