import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';
import type { QueueDepth } from './projections/world-metrics.js';

/** Settings of {@link mountQueueBoard}. */
export interface QueueBoardOptions {
  /** Where the board lives. @default '/queues' */
  basePath?: string;
  /** Shows jobs without the buttons that change them (retry, clean, add). @default false */
  readOnly?: boolean;
}

/** Lets the caller add or remove queues after mounting (a world's queues can change at runtime). */
export interface MountedQueueBoard {
  basePath: string;
  setQueues(queues: readonly Queue[]): void;
}

/**
 * Mounts bull-board for the given BullMQ queues under `basePath` of the server's app. Call it
 * before the server listens (`startServer({ configure })`), because Hono fixes its routes on the
 * first request. The server's guards apply: with a token, the board's changes need it too, which
 * the board's own UI cannot send, so an exposed board is in effect read-only for browsers.
 */
export function mountQueueBoard(app: Hono, queues: readonly Queue[], options: QueueBoardOptions = {}): MountedQueueBoard {
  const basePath = options.basePath ?? '/queues';
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(basePath);
  const adapt = (list: readonly Queue[]) => list.map((queue) => new BullMQAdapter(queue, { readOnlyMode: options.readOnly ?? false }));
  const board = createBullBoard({
    queues: adapt(queues),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Genesis queues' } },
  });
  // Hono tells /queues/ from /queues; people type both.
  app.get(`${basePath}/`, (c) => c.redirect(basePath));
  app.route(basePath, adapter.registerPlugin());
  return { basePath, setQueues: (list) => board.replaceQueues(adapt(list)) };
}

/** How many jobs each queue holds in each state, for the metrics (`genesis_queue_jobs`). */
export async function readQueueDepths(queues: readonly Queue[]): Promise<QueueDepth[]> {
  const states = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed'] as const;
  const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...states)));
  return queues.flatMap((queue, i) => states.map((state) => ({ queue: queue.name, state, count: counts[i]![state] ?? 0 })));
}
