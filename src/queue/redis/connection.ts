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
  // Nothing listening, or no such host: no retry can help a first connection, so it fails at once.
  let onError: (error: NodeJS.ErrnoException) => void = () => undefined;
  const absent = new Promise<never>((_, reject) => {
    onError = (error) => {
      if (ABSENT.has(error.code ?? '')) reject(error);
    };
    redis.on('error', onError);
  });
  try {
    await withTimeout(Promise.race([redis.connect().then(() => redis.ping()), absent]), options.timeoutMs ?? 5000);
    return redis;
  } catch (cause) {
    redis.disconnect();
    throw new GenesisError('redis-unreachable', `Redis at ${url} does not answer (${cause instanceof Error ? cause.message : String(cause)})`, {
      hint: startRedisHint(url),
      cause,
    });
  } finally {
    redis.off('error', onError);
  }
}

const ABSENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * How to get a Redis at the URL tried. The one docker compose starts is not published on the host
 * (only its own services reach it, as redis://redis:6379), so it is no answer to a command run here.
 */
function startRedisHint(url: string): string {
  let host = '127.0.0.1';
  let port = '6379';
  try {
    const parsed = new URL(url);
    host = parsed.hostname || host;
    port = parsed.port || port;
  } catch {
    // Not a URL: the defaults say what a local Redis would be.
  }
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
  const start = local
    ? `start one on this machine: \`redis-server --port ${port} --daemonize yes --save ''\`${port === '6379' ? ' (or bash scripts/setup-services.sh redis, from a checkout of Genesis)' : ''}`
    : `check that Redis runs on ${host} and that its port ${port} is reachable from here`;
  return `${start}; or pass the URL of a Redis that runs with --redis. The Redis of docker compose answers only inside its network (redis://redis:6379), not on this host`;
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
