import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { BullmqEpisodeQueue } from '../../../src/queue/bullmq/episode-queue.js';
import { BullmqVerificationQueue } from '../../../src/queue/bullmq/verification-queue.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const it = itWith('redis');

describe("the scheduler's queues when Redis is down as they close", () => {
  it('close within seconds (a scheduler that lost its lock while Redis restarts must exit, not hang)', async () => {
    const port = String(16000 + Math.floor(Math.random() * 2000));
    const redisServer = spawn(
      'redis-server',
      ['--port', port, '--bind', '127.0.0.1', '--dir', await tempDir('genesis-redis-'), '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    try {
      await sleep(300);
      const redis = await connectRedis(`redis://127.0.0.1:${port}`);
      const where = { remote: '/nowhere', worldKey: `test-${randomUUID()}` };
      const queues = [
        new BullmqEpisodeQueue(redis, where, { lockDurationMs: 1000, stalledIntervalMs: 500 }),
        new BullmqVerificationQueue(redis, where, { lockDurationMs: 1000, stalledIntervalMs: 500 }),
      ];
      await sleep(500);
      redisServer.kill('SIGKILL');
      await new Promise((r) => redisServer.once('exit', r));
      await sleep(500);
      const started = Date.now();
      const closed = await Promise.race([Promise.all(queues.map((q) => q.close())).then(() => 'closed'), sleep(20_000, 'hung')]);
      expect(closed).toBe('closed');
      expect(Date.now() - started).toBeLessThan(15_000);
      redis.disconnect();
    } finally {
      redisServer.kill('SIGKILL');
    }
  }, 60_000);
});
