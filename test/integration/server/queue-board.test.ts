import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { mountQueueBoard } from '../../../src/server/queue-board.js';
import { itWith } from '../../helpers/services.js';

describe('the BullMQ board under /queues', () => {
  itWith('redis')('shows a real queue and its waiting job through bull-board', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const name = `test-${randomUUID()}`;
    const queue = new Queue(name, { connection: redis });
    try {
      await queue.add('episode', { task: 'a' });
      const app = new Hono();
      const board = mountQueueBoard(app, [queue]);
      expect(board.basePath).toBe('/queues');

      expect((await app.request('/queues/')).headers.get('location')).toBe('/queues');
      const page = await app.request('/queues');
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Genesis queues');

      const api = await app.request('/queues/api/queues');
      expect(api.status).toBe(200);
      const body = (await api.json()) as { queues: Array<{ name: string; counts: Record<string, number> }> };
      const shown = body.queues.find((q) => q.name === name);
      expect(shown?.counts.waiting).toBe(1);

      board.setQueues([]);
      const after = (await (await app.request('/queues/api/queues')).json()) as { queues: unknown[] };
      expect(after.queues).toEqual([]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
  });
});
