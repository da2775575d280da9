/**
 * Usage-limit holds of model credentials, shared by every worker of a fleet: a 429 one worker's
 * episode met holds the episodes of every other worker using the same credential until its
 * reset, instead of each worker spending an episode to learn it again.
 *
 * Keys (by credential digest, never the key; not per world: worlds share credentials):
 * - `genesis:model-holds:<digest>`  JSON { untilMs, message }, PX expiry at the reset
 */
import type { Redis } from 'ioredis';
import type { LimitHolds } from '../../channel/limit-holds.js';

const KEY_PREFIX = 'genesis:model-holds:';

export class RedisModelHolds implements LimitHolds {
  constructor(private readonly redis: Redis) {}

  private async read(credentialId: string): Promise<{ untilMs: number; message: string } | null> {
    const text = await this.redis.get(KEY_PREFIX + credentialId);
    if (!text) return null;
    try {
      const held = JSON.parse(text) as { untilMs?: unknown; message?: unknown };
      if (typeof held.untilMs !== 'number' || held.untilMs <= Date.now()) return null;
      return { untilMs: held.untilMs, message: typeof held.message === 'string' ? held.message : 'a usage limit' };
    } catch {
      return null;
    }
  }

  async until(credentialId: string): Promise<number | null> {
    return (await this.read(credentialId))?.untilMs ?? null;
  }

  async message(credentialId: string): Promise<string | null> {
    return (await this.read(credentialId))?.message ?? null;
  }

  async hold(credentialId: string, untilMs: number, message: string): Promise<void> {
    const ttl = Math.ceil(untilMs - Date.now());
    if (ttl <= 0) return;
    const held = await this.read(credentialId);
    // A later reset another worker saw stands.
    if (held && held.untilMs >= untilMs) return;
    await this.redis.set(KEY_PREFIX + credentialId, JSON.stringify({ untilMs, message }), 'PX', ttl);
  }
}
