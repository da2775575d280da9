/**
 * Which workers are alive: each worker rewrites its own entry on a heartbeat, with an expiry of
 * three heartbeats, so a killed worker drops out of `genesis status` by itself.
 *
 * Keys (not per world: one worker process may serve several worlds' queues):
 * - `genesis:workers:<id>`  JSON {@link WorkerInfo}, PX expiry of 3 × the heartbeat interval
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { GenesisError } from '../../errors/genesis-error.js';
import { LUA_NOW_MS, RedisScript } from './script.js';

const KEY_PREFIX = 'genesis:workers:';

/** What a worker says about itself when it starts. */
export interface WorkerAnnouncement {
  id: string;
  host: string;
  pid: number;
  concurrency: number;
  /** The queue it takes jobs from. */
  queue: string;
  /** The key prefix of its queues (GENESIS_QUEUE_PREFIX): the fleet it belongs to when fleets share a Redis. */
  prefix?: string;
}

const workerInfoSchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number().int(),
  concurrency: z.number().int(),
  queue: z.string(),
  /** Absent in entries of workers older than the field. */
  prefix: z.string().optional(),
  episodes: z.array(z.string()),
  startedAt: z.number(),
  lastSeen: z.number(),
});

/** A live worker as the registry holds it. Times are ms since the epoch on the Redis server's clock. */
export type WorkerInfo = z.infer<typeof workerInfoSchema>;

/** Options of {@link startHeartbeat}. */
export interface HeartbeatOptions {
  /**
   * Time between heartbeats; a worker silent for three of them is taken for dead.
   * @default 5000
   */
  intervalMs?: number;
}

/** A running heartbeat. */
export interface WorkerHeartbeat {
  /** Replaces the episodes the worker reports as running, and writes them at once. */
  setEpisodes(ids: readonly string[]): void;
  /** Stops the heartbeat and deletes the worker's entry (after at most one interval of trying; it expires anyway). */
  stop(): Promise<void>;
}

// KEYS: the worker's key. ARGV: its info as JSON without lastSeen, the expiry in ms.
// lastSeen is stamped here so every worker's entry is on the server's clock.
const writeScript = new RedisScript(`${LUA_NOW_MS}
local value = string.sub(ARGV[1], 1, -2) .. string.format(',"lastSeen":%d}', now)
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return 1
`);

/**
 * Announces a worker and keeps its entry alive until `stop`. Resolves once the first heartbeat is
 * written, so the worker is listed from then on.
 */
export async function startHeartbeat(redis: Redis, info: WorkerAnnouncement, options: HeartbeatOptions = {}): Promise<WorkerHeartbeat> {
  const intervalMs = options.intervalMs ?? 5000;
  if (info.id === '') throw new GenesisError('invalid-argument', 'a worker needs a non-empty id');
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) {
    throw new GenesisError('invalid-argument', `heartbeat intervalMs must be a positive integer, got ${intervalMs}`);
  }
  const key = `${KEY_PREFIX}${info.id}`;
  const [seconds, micros] = await redis.time();
  const startedAt = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  let episodes: string[] = [];
  let stopped = false;
  // Writes go out in order on the one connection; `stop` waits for the last before deleting.
  let lastWrite: Promise<unknown> = Promise.resolve();

  const write = (): Promise<unknown> => {
    const { id, host, pid, concurrency, queue, prefix } = info;
    const value = JSON.stringify({ id, host, pid, concurrency, queue, prefix, episodes, startedAt });
    lastWrite = writeScript.run(redis, [key], [value, 3 * intervalMs]);
    return lastWrite;
  };

  await write();
  const timer = setInterval(() => {
    // A missed beat is retried on the next one; three in a row and the entry expires, as it should.
    write().catch(() => undefined);
  }, intervalMs);
  timer.unref();

  return {
    setEpisodes(ids) {
      if (stopped) return;
      episodes = [...ids];
      write().catch(() => undefined);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      const removal = lastWrite.catch(() => undefined).then(() => redis.del(key));
      // With Redis unreachable a command waits for it; the entry expires by itself, so give up.
      let giveUp: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        giveUp = setTimeout(resolve, intervalMs);
      });
      await Promise.race([removal.catch(() => undefined), deadline]);
      clearTimeout(giveUp);
    },
  };
}

/** The workers alive now, by id. Entries that do not parse (another Genesis version) are skipped. */
export async function listWorkers(redis: Redis): Promise<WorkerInfo[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 200);
    for (const key of batch) keys.add(key);
    cursor = next;
  } while (cursor !== '0');
  if (keys.size === 0) return [];

  const values = await redis.mget([...keys]);
  const workers: WorkerInfo[] = [];
  for (const value of values) {
    // null: the worker expired between SCAN and MGET.
    if (value === null) continue;
    const parsed = workerInfoSchema.safeParse(safeJson(value));
    if (parsed.success) workers.push(parsed.data);
  }
  return workers.sort((a, b) => a.id.localeCompare(b.id));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
