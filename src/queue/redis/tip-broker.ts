import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { queuePrefix } from '../bullmq/distributed-job.js';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id');

/** A worker whose agent finished asks the world's scheduler for its change's place in the integration queue. */
export const tipRequestSchema = z
  .object({
    episodeId: z.string().min(1),
    task: z.string().min(1),
    /** The agent's change, a commit on `base`, already in the world's object store (a world on shared storage). */
    candidate: sha,
    base: sha,
    /** What the agent reported the episode cost (the Genesis-Cost of its commit). */
    costUsd: z.number().nonnegative().nullable().optional(),
    /** Where the answer goes (a Redis list the worker blocks on). */
    replyKey: z.string().min(1),
    /** Epoch ms after which the worker no longer waits: an older request is dropped unanswered. */
    deadline: z.number().int(),
  })
  .strict();

export type TipRequest = z.output<typeof tipRequestSchema>;

const tipReplySchema = z.object({ onto: sha, commit: sha, speculative: z.boolean() }).strict().nullable();

export type TipReply = NonNullable<z.output<typeof tipReplySchema>>;

const requestsKey = (worldKey: string) => `${queuePrefix()}:tips:${worldKey}:requests`;

/** How long a worker waits for its place before it gates on its base instead. @default 10 s */
export const TIP_WAIT_MS = 10_000;

/**
 * The scheduler's side of tip gating over Redis: takes the workers' requests for a
 * place in the integration queue, one at a time, and answers each on its reply list. A request the
 * handler refuses (an episode it is not running, a base it did not give) is answered with null, as
 * is one it cannot serve; requests past their deadline are dropped (their worker gates on its base).
 */
export class RedisTipServer {
  private running = false;
  private readonly blocking: Redis;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly worldKey: string,
  ) {
    this.blocking = redis.duplicate();
  }

  serve(handler: (request: Omit<TipRequest, 'replyKey' | 'deadline'>) => Promise<TipReply | null>): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.take(handler);
  }

  async close(): Promise<void> {
    this.running = false;
    this.blocking.disconnect();
    await this.loop;
  }

  private async take(handler: (request: Omit<TipRequest, 'replyKey' | 'deadline'>) => Promise<TipReply | null>): Promise<void> {
    while (this.running) {
      const popped = await this.blocking.blpop(requestsKey(this.worldKey), 1).catch(() => null);
      if (!popped) {
        if (!this.running) return;
        continue;
      }
      const request = parseRequest(popped[1]);
      if (!request || request.deadline < Date.now()) continue;
      const { replyKey, deadline: _deadline, ...change } = request;
      const reply = await Promise.resolve()
        .then(() => handler(change))
        .catch(() => null);
      await this.redis
        .multi()
        .rpush(replyKey, JSON.stringify(reply))
        .pexpire(replyKey, 60_000)
        .exec()
        .catch(() => undefined);
    }
  }
}

function parseRequest(raw: string): TipRequest | null {
  try {
    const parsed = tipRequestSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The worker's side: asks for the change's place and waits up to `waitMs` for the answer. Null
 * (no place, no answer in time, Redis unreachable) means: gate on the base, as without a queue.
 */
export async function requestTip(
  redis: Redis,
  worldKey: string,
  change: Omit<TipRequest, 'replyKey' | 'deadline'>,
  waitMs = TIP_WAIT_MS,
): Promise<TipReply | null> {
  const replyKey = `${queuePrefix()}:tips:${worldKey}:reply:${change.episodeId}:${randomBytes(4).toString('hex')}`;
  const request: TipRequest = { ...change, replyKey, deadline: Date.now() + waitMs };
  const blocking = redis.duplicate();
  try {
    await redis.rpush(requestsKey(worldKey), JSON.stringify(request));
    const popped = await blocking.blpop(replyKey, waitMs / 1000);
    if (!popped) return null;
    const parsed = tipReplySchema.safeParse(JSON.parse(popped[1]));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  } finally {
    blocking.disconnect();
  }
}
