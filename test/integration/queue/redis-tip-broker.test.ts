import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { RedisTipServer, requestTip } from '../../../src/queue/redis/tip-broker.js';
import { itWith } from '../../helpers/services.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

describe('places in the integration queue asked for over Redis', () => {
  let redis: Redis;
  let server: RedisTipServer | null = null;
  const worldKey = `w-${randomUUID().slice(0, 8)}`;
  beforeEach(async () => {
    process.env.GENESIS_QUEUE_PREFIX = `test-${randomUUID()}`;
    redis = await connectRedis('redis://127.0.0.1:6379');
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    redis.disconnect();
    delete process.env.GENESIS_QUEUE_PREFIX;
  });

  itWith('redis')('answers each worker with the place the scheduler reserved, and only the episodes it runs', async () => {
    server = new RedisTipServer(redis, worldKey);
    const asked: string[] = [];
    server.serve(async (c) => {
      asked.push(c.episodeId);
      return c.episodeId === 'e1' ? { onto: A, commit: B, speculative: true } : null;
    });
    const [one, other] = await Promise.all([
      requestTip(redis, worldKey, { episodeId: 'e1', task: 't1', candidate: C, base: A }),
      requestTip(redis, worldKey, { episodeId: 'e2', task: 't2', candidate: C, base: A }),
    ]);
    expect(one).toEqual({ onto: A, commit: B, speculative: true });
    expect(other).toBeNull();
    expect(asked.sort()).toEqual(['e1', 'e2']);
  });

  itWith('redis')('lets a worker gate on its base when no scheduler answers in time, and drops its request once it stopped waiting', async () => {
    const t0 = Date.now();
    expect(await requestTip(redis, worldKey, { episodeId: 'e1', task: 't1', candidate: C, base: A }, 300)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(3000);
    await new Promise((r) => setTimeout(r, 50));
    // A scheduler that starts later does not reserve a place for a worker that gave up.
    server = new RedisTipServer(redis, worldKey);
    const asked: string[] = [];
    server.serve(async (c) => {
      asked.push(c.episodeId);
      return null;
    });
    expect(await requestTip(redis, worldKey, { episodeId: 'e2', task: 't2', candidate: C, base: A })).toBeNull();
    expect(asked).toEqual(['e2']);
  });

  itWith('redis')('ignores a malformed request and goes on serving', async () => {
    server = new RedisTipServer(redis, worldKey);
    server.serve(async () => ({ onto: A, commit: B, speculative: false }));
    await redis.rpush(`${process.env.GENESIS_QUEUE_PREFIX}:tips:${worldKey}:requests`, '{"episodeId": 1', JSON.stringify({ episodeId: 'x' }));
    expect(await requestTip(redis, worldKey, { episodeId: 'e1', task: 't1', candidate: C, base: A })).toEqual({ onto: A, commit: B, speculative: false });
  });
});
