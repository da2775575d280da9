/**
 * The integrator lock: at most one process per world moves the accepted branch. The lock expires
 * unless its holder refreshes it, so a crashed `genesis run` frees the world by itself; each grant
 * carries a fencing token that only grows, so a holder that lost the lock (a long pause, a
 * partition) can be told apart from the one that took it over. The git compare-and-swap on the
 * accepted ref stays the final guard.
 *
 * Keys (`{world}` is a cluster hash tag, so both share a slot):
 * - `genesis:{<world>}:integrator`        JSON `{ token, since, owner: { host, pid } }`, with a PX expiry
 * - `genesis:{<world>}:integrator-fence`  counter behind the fencing tokens; never expires
 *
 * The counter starts at the server's clock in ms, not at 0: if Redis loses its data (a restart
 * without persistence) the next token still exceeds every earlier one, as long as the world had
 * fewer grants than milliseconds since its counter was seeded (a lock held for seconds at a time
 * always does) and the server's clock did not go back.
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { GenesisError } from '../../errors/genesis-error.js';
import { LUA_NOW_MS, RedisScript } from './script.js';

/** Who holds a lock: enough for a user to find the process. */
export interface IntegratorLockOwner {
  host: string;
  pid: number;
}

/** The current holder of a world's integrator lock. */
export interface IntegratorLockHolder {
  owner: IntegratorLockOwner;
  token: number;
  /** When the lock was granted, in ms since the epoch on the Redis server's clock. */
  since: number;
}

/** Options of {@link IntegratorLock.acquire}. */
export interface IntegratorLockOptions {
  /**
   * How long the lock outlives its last refresh; refreshed every third of it. Also how long a
   * world stays locked after its integrator dies.
   * @default 15_000
   */
  ttlMs?: number;
  /** @default this process: `{ host: os.hostname(), pid: process.pid }` */
  owner?: IntegratorLockOwner;
}

/**
 * Why a holder lost its lock: another process holds it now (`taken`), it expired and nobody took
 * it yet (`expired`), or no refresh got through within a ttl, so it may have expired (`unconfirmed`).
 */
export type IntegratorLockLoss = { reason: 'taken'; holder: IntegratorLockHolder } | { reason: 'expired' } | { reason: 'unconfirmed' };

// KEYS: lock, fence. ARGV: ttl, owner JSON. Replies {1, value} when granted, {0, value, pttl} when held.
const acquireScript = new RedisScript(`${LUA_NOW_MS}
local current = redis.call('GET', KEYS[1])
if current then return {0, current, redis.call('PTTL', KEYS[1])} end
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('SET', KEYS[2], string.format('%d', now)) end
local token = redis.call('INCR', KEYS[2])
local value = string.format('{"token":%d,"since":%d,"owner":%s}', token, now, ARGV[2])
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[1])
return {1, value}
`);

// KEYS: lock. ARGV: our value, ttl. Replies {1} when extended, {0} when gone, {2, value} when taken.
const refreshScript = new RedisScript(`
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
if not current then return {0} end
return {2, current}
`);

// KEYS: lock. ARGV: our value.
const releaseScript = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

function lockKey(world: string): string {
  return `genesis:{${world}}:integrator`;
}

function parseHolder(value: string): IntegratorLockHolder {
  return JSON.parse(value) as IntegratorLockHolder;
}

/** The integrator lock of one world, held by this process until released or lost. */
export class IntegratorLock {
  /** The fencing token of this grant; a later grant of the same world always has a larger one. */
  readonly token: number;
  readonly world: string;

  private readonly redis: Redis;
  private readonly key: string;
  private readonly value: string;
  private readonly ttlMs: number;
  private readonly timer: NodeJS.Timeout;
  private readonly lostCallbacks: ((loss: IntegratorLockLoss) => void)[] = [];
  private loss: IntegratorLockLoss | undefined;
  private released = false;
  private refreshing = false;
  /** performance.now() when the last successful refresh was sent: held at least a ttl from then. */
  private confirmedAt: number;

  private constructor(redis: Redis, world: string, value: string, ttlMs: number, grantedBefore: number) {
    this.redis = redis;
    this.world = world;
    this.key = lockKey(world);
    this.value = value;
    this.token = parseHolder(value).token;
    this.ttlMs = ttlMs;
    this.confirmedAt = grantedBefore;
    this.timer = setInterval(() => this.refresh(), Math.max(1, Math.floor(ttlMs / 3)));
    // The lock must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /**
   * Takes the world's integrator lock, or throws GenesisError `integrator-running` naming the
   * live holder (retryable: the lock frees itself a ttl after its holder dies).
   */
  static async acquire(redis: Redis, world: string, options: IntegratorLockOptions = {}): Promise<IntegratorLock> {
    const ttlMs = options.ttlMs ?? 15_000;
    if (world === '') throw new GenesisError('invalid-argument', 'IntegratorLock needs a world name');
    if (!Number.isInteger(ttlMs) || ttlMs < 3) {
      throw new GenesisError('invalid-argument', `integrator lock ttlMs must be an integer of at least 3, got ${ttlMs}`);
    }
    const owner = options.owner ?? { host: hostname(), pid: process.pid };
    const sentAt = performance.now();
    const keys = [lockKey(world), `genesis:{${world}}:integrator-fence`];
    const reply = (await acquireScript.run(redis, keys, [ttlMs, JSON.stringify(owner)])) as [number, string, number?];
    if (reply[0] === 1) return new IntegratorLock(redis, world, reply[1], ttlMs, sentAt);

    const holder = parseHolder(reply[1]);
    const waitS = Math.max(1, Math.ceil((reply[2] ?? ttlMs) / 1000));
    throw new GenesisError(
      'integrator-running',
      `world "${world}" already has an integrator: ${holder.owner.host} pid ${holder.owner.pid}, ` +
        `since ${new Date(holder.since).toISOString()} (fencing token ${holder.token})`,
      {
        hint: `another \`genesis run\` is integrating this world; stop it first, or wait ${waitS} s if it died (its lock expires)`,
      },
    );
  }

  /** The current holder of a world's lock, or null when nobody holds it (for `genesis status`). */
  static async readHolder(redis: Redis, world: string): Promise<IntegratorLockHolder | null> {
    const value = await redis.get(lockKey(world));
    return value === null ? null : parseHolder(value);
  }

  /** Asks Redis whether the lock is still this grant's; false once released or lost. */
  async isHeld(): Promise<boolean> {
    if (this.loss !== undefined || this.released) return false;
    const current = await this.redis.get(this.key);
    if (current === this.value) return true;
    this.lose(current === null ? { reason: 'expired' } : { reason: 'taken', holder: parseHolder(current) });
    return false;
  }

  /**
   * Calls `callback` once when the lock is lost (not when released); at once if it already is.
   * The holder must stop integrating: another process may be moving the branch.
   */
  onLost(callback: (loss: IntegratorLockLoss) => void): void {
    const { loss } = this;
    if (loss !== undefined) queueMicrotask(() => callback(loss));
    else this.lostCallbacks.push(callback);
  }

  /** Stops refreshing and deletes the lock if it is still this grant's. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    await releaseScript.run(this.redis, [this.key], [this.value]);
  }

  private refresh(): void {
    if (performance.now() - this.confirmedAt >= this.ttlMs) {
      this.lose({ reason: 'unconfirmed' });
      return;
    }
    // With maxRetriesPerRequest: null a refresh waits through a Redis outage; one at a time.
    if (this.refreshing) return;
    this.refreshing = true;
    const sentAt = performance.now();
    refreshScript
      .run(this.redis, [this.key], [this.value, this.ttlMs])
      .then((reply) => {
        const [status, current] = reply as [number, string?];
        if (status === 1) this.confirmedAt = sentAt;
        else if (status === 0) this.lose({ reason: 'expired' });
        else this.lose({ reason: 'taken', holder: parseHolder(current as string) });
      })
      // A failed refresh is retried on the next tick; the ttl deadline above decides when to give up.
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = false;
      });
  }

  private lose(loss: IntegratorLockLoss): void {
    if (this.loss !== undefined || this.released) return;
    this.loss = loss;
    clearInterval(this.timer);
    if (loss.reason === 'unconfirmed') {
      // If Redis comes back while the lock is still ours, free it rather than make others wait a ttl.
      releaseScript.run(this.redis, [this.key], [this.value]).catch(() => undefined);
    }
    // Queued, so a throwing callback surfaces as an uncaught error instead of being swallowed here.
    for (const callback of this.lostCallbacks.splice(0)) queueMicrotask(() => callback(loss));
  }
}
