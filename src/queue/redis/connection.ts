import { Redis } from 'ioredis';
import { GenesisError } from '../../errors/genesis-error.js';
import { backoffDelay, backoffPolicy } from '../../retry/backoff-policy.js';

/** Default Redis for a single machine, as started by scripts/setup-services.sh. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Reconnects to a Redis that went away: soon at first, then every half second at most, never
 * giving up. The cap is short because leases and the integrator lock live a few seconds: a
 * connection that waited 2 s between tries came back after a 1.5 s restart with the lock's ttl
 * already spent, and the scheduler stopped (exit 5) where it could have carried on.
 */
const RECONNECT = backoffPolicy({ initialMs: 100, maxMs: 500, jitter: 0.2 });

/**
 * Opens a Redis connection for BullMQ and Genesis's own keys. `maxRetriesPerRequest: null` is what
 * BullMQ requires: commands wait through a Redis restart instead of failing, so workers carry on
 * when Redis comes back. The first connection must answer within `timeoutMs`, so a wrong URL is a
 * clear error rather than a hang.
 */
export async function connectRedis(url: string, options: { timeoutMs?: number; name?: string } = {}): Promise<Redis> {
  // A password of its own keeps it out of the URL, which commands print (a worker's ready line,
  // status) and a Kubernetes ConfigMap holds; a password in the URL still wins.
  const password = URL.canParse(url) && new URL(url).password ? undefined : process.env.GENESIS_REDIS_PASSWORD || undefined;
  const redis = new Redis(url, {
    ...(password ? { password } : {}),
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    lazyConnect: true,
    connectionName: options.name,
    retryStrategy: (times) => backoffDelay(RECONNECT, times, Math.random()) ?? RECONNECT.maxMs,
  });
  redis.on('error', () => undefined); // reconnects are handled by retryStrategy; errors surface on commands
  try {
    await withTimeout(
      redis.connect().then(() => redis.ping()),
      options.timeoutMs ?? 5000,
    );
    return redis;
  } catch (cause) {
    redis.disconnect();
    throw new GenesisError('redis-unreachable', `Redis at ${url} does not answer`, {
      hint: 'start it (bash scripts/setup-services.sh redis, or docker compose up -d redis) or pass the right --redis URL',
      cause,
    });
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
