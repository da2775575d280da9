import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { connectRedis, DEFAULT_REDIS_URL } from '../../../src/queue/redis/connection.js';

export const REDIS_URL = process.env.GENESIS_TEST_REDIS ?? DEFAULT_REDIS_URL;

const connections: Redis[] = [];
const patterns: string[] = [];

afterEach(async () => {
  // A test may have closed its own connections on purpose (a worker that died).
  const redis = connections.find((c) => c.status === 'ready') ?? (patterns.length > 0 ? await testRedis() : undefined);
  if (redis !== undefined) {
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  }
  patterns.length = 0;
  for (const connection of connections.splice(0)) connection.disconnect();
});

/** A Redis connection closed when the current test ends. */
export async function testRedis(): Promise<Redis> {
  const redis = await connectRedis(REDIS_URL, { name: 'genesis-test' });
  connections.push(redis);
  return redis;
}

/** A world name no other test uses; its `genesis:{world}:*` keys are deleted when the test ends. */
export function testWorld(): string {
  const world = `test-${randomUUID()}`;
  patterns.push(`genesis:{${world}}:*`);
  return world;
}

/** A unique prefix for worker ids; their `genesis:workers:` entries are deleted when the test ends. */
export function testWorkerPrefix(): string {
  const prefix = `test-${randomUUID()}`;
  patterns.push(`genesis:workers:${prefix}*`);
  return prefix;
}

/**
 * A BullMQ key prefix no other test uses, set as GENESIS_QUEUE_PREFIX for the queues this test
 * makes (and the processes it starts); its keys are deleted when the test ends.
 */
export function testQueuePrefix(): string {
  const prefix = `test-${randomUUID()}`;
  process.env.GENESIS_QUEUE_PREFIX = prefix;
  patterns.push(`${prefix}:*`);
  return prefix;
}
