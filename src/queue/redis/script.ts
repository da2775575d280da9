import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA1 and sent in full only when Redis does not know it yet (first use,
 * or after a restart emptied the script cache). Unlike ioredis's `defineCommand`, it adds no
 * methods to a connection that other modules (BullMQ) share.
 */
export class RedisScript {
  private readonly lua: string;
  private readonly sha: string;

  constructor(lua: string) {
    this.lua = lua;
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script with `keys` as KEYS and `args` as ARGV; resolves with its reply. */
  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

/**
 * Lua that sets `now` to the Redis server's clock in milliseconds. Every expiry Genesis keeps in
 * Redis is measured on this one clock, so clients on machines with skewed clocks still agree.
 */
export const LUA_NOW_MS = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;
