/**
 * Path leases in Redis: the distributed form of schedule/path-leases.ts, shared by every
 * scheduler and worker of a world. A holder (an episode) gets all of a task's paths or none, two
 * live holders never hold paths that could match the same file, and a lease whose holder stops
 * renewing it (a killed worker) expires by itself.
 *
 * Keys, one pair per world; `{world}` is a cluster hash tag, so both live in one slot and a single
 * script may touch them:
 * - `genesis:{<world>}:leases:expiries` sorted set: holder → expiry, ms on the Redis server's clock
 * - `genesis:{<world>}:leases:records`  hash: holder → JSON `{ paths, prefixes }`
 *
 * Overlap is decided inside Lua on static prefixes (see redis-lease-prefix.ts), which is at least
 * as conservative as `patternsOverlap`.
 */
import type { Redis } from 'ioredis';
import { GenesisError } from '../../errors/genesis-error.js';
import type { LeaseStore } from '../lease-store.js';
import { staticPrefixes } from './lease-prefix.js';
import { LUA_NOW_MS, RedisScript } from './script.js';

/** A live lease as `list` reports it. */
export interface LeaseInfo {
  holder: string;
  /** The patterns as the holder asked for them. */
  paths: string[];
  /** Milliseconds since the epoch, on the Redis server's clock. */
  expiresAt: number;
}

/** Options of {@link RedisPathLeases}. */
export interface RedisPathLeasesOptions {
  /**
   * How long a lease lives after its last acquire or renew. A holder renews well within it
   * (every third of it, say); a dead holder's paths are free again after at most this long.
   * @default 30_000
   */
  ttlMs?: number;
}

// Shared by the scripts: drop leases whose expiry has passed, so a dead holder blocks no one.
const LUA_PURGE = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
for _, holder in ipairs(expired) do redis.call('HDEL', KEYS[2], holder) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now)) end
`;

// Twin of staticPrefixesConflict in redis-lease-prefix.ts.
const LUA_CONFLICTS = `
local function conflicts(a, b)
  if a == '' or b == '' or a == b then return true end
  if #a < #b then return string.sub(b, 1, #a + 1) == a .. '/' end
  return string.sub(a, 1, #b + 1) == b .. '/'
end
`;

// KEYS: expiries, records. ARGV: holder, ttl, record JSON, then the holder's prefixes.
const acquireScript = new RedisScript(`${LUA_NOW_MS}${LUA_PURGE}${LUA_CONFLICTS}
local holder = ARGV[1]
local records = redis.call('HGETALL', KEYS[2])
for i = 1, #records, 2 do
  if records[i] ~= holder then
    local theirs = cjson.decode(records[i + 1]).prefixes
    for a = 4, #ARGV do
      for _, b in ipairs(theirs) do
        if conflicts(ARGV[a], b) then return 0 end
      end
    end
  end
end
redis.call('HSET', KEYS[2], holder, ARGV[3])
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[2])), holder)
return 1
`);

// KEYS: expiries, records. ARGV: holder, ttl.
const renewScript = new RedisScript(`${LUA_NOW_MS}${LUA_PURGE}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', string.format('%d', now + tonumber(ARGV[2])), ARGV[1])
return 1
`);

// KEYS: expiries, records. Replies holder, expiry, record, holder, expiry, record, ...
const listScript = new RedisScript(`${LUA_NOW_MS}
local live = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('(%d', now), '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local record = redis.call('HGET', KEYS[2], live[i])
  if record then
    out[#out + 1] = live[i]
    out[#out + 1] = live[i + 1]
    out[#out + 1] = record
  end
end
return out
`);

/**
 * Path leases of one world, kept in Redis. Every method is one atomic step on the server, so
 * any number of processes on any number of machines can share a world's leases.
 */
export class RedisPathLeases implements LeaseStore {
  private readonly redis: Redis;
  private readonly keys: [expiries: string, records: string];
  private readonly ttlMs: number;

  constructor(redis: Redis, world: string, options: RedisPathLeasesOptions = {}) {
    const ttlMs = options.ttlMs ?? 30_000;
    if (world === '') throw new GenesisError('invalid-argument', 'RedisPathLeases needs a world name');
    if (!Number.isInteger(ttlMs) || ttlMs <= 0) {
      throw new GenesisError('invalid-argument', `lease ttlMs must be a positive integer, got ${ttlMs}`);
    }
    this.redis = redis;
    this.keys = [`genesis:{${world}}:leases:expiries`, `genesis:{${world}}:leases:records`];
    this.ttlMs = ttlMs;
  }

  /**
   * Leases all of `paths` to `holder`, or nothing, in one atomic step. True when granted; false
   * when a live lease of another holder could share a file with them. A holder asking again
   * gets its lease replaced by the new paths (the same paths: its lease is extended), under the
   * same rule. Expired leases are dropped first, by the Redis server's clock.
   */
  async tryAcquire(holder: string, paths: readonly string[]): Promise<boolean> {
    const prefixes = staticPrefixes(paths);
    const record = JSON.stringify({ paths, prefixes });
    const reply = await acquireScript.run(this.redis, this.keys, [holder, this.ttlMs, record, ...prefixes]);
    return reply === 1;
  }

  /** Pushes the holder's expiry a full ttl forward. False when its lease is gone (expired or released). */
  async renew(holder: string): Promise<boolean> {
    return (await renewScript.run(this.redis, this.keys, [holder, this.ttlMs])) === 1;
  }

  /** Every live holder. */
  async holders(): Promise<string[]> {
    return (await this.list()).map((lease) => lease.holder);
  }

  /** Frees the holder's paths; a holder without a lease is ignored. */
  async release(holder: string): Promise<void> {
    const [expiries, records] = this.keys;
    await this.redis.multi().zrem(expiries, holder).hdel(records, holder).exec();
  }

  /** The live leases, soonest expiry first. */
  async list(): Promise<LeaseInfo[]> {
    const reply = (await listScript.run(this.redis, this.keys, [])) as string[];
    const leases: LeaseInfo[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const { paths } = JSON.parse(reply[i + 2] as string) as { paths: string[] };
      leases.push({ holder: reply[i] as string, paths, expiresAt: Number(reply[i + 1]) });
    }
    return leases;
  }
}
