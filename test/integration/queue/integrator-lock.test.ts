import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { IntegratorLock, type IntegratorLockLoss } from '../../../src/queue/redis/integrator-lock.js';
import { itWith } from '../../helpers/services.js';
import { REDIS_URL, testRedis, testWorld } from './redis-test-world.js';

const it = itWith('redis');
const HOLDER_SCRIPT = fileURLToPath(new URL('./integrator-lock-holder.ts', import.meta.url));

const locks: IntegratorLock[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const lock of locks.splice(0)) await lock.release().catch(() => undefined);
});

async function acquire(...args: Parameters<typeof IntegratorLock.acquire>): Promise<IntegratorLock> {
  const lock = await IntegratorLock.acquire(...args);
  locks.push(lock);
  return lock;
}

function nextLoss(lock: IntegratorLock): Promise<IntegratorLockLoss> {
  return new Promise((resolve) => lock.onLost(resolve));
}

type HolderEvent = { event: 'acquired'; token: number } | { event: 'lost'; loss: IntegratorLockLoss };

/** A process of its own that holds the lock; `next` resolves with its next printed event. */
function spawnHolder(world: string, ttlMs: number): { child: ChildProcess; next: () => Promise<HolderEvent> } {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER_SCRIPT, REDIS_URL, world, String(ttlMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error('the lock holder process exited');
      return JSON.parse(line.value) as HolderEvent;
    },
  };
}

describe('IntegratorLock', () => {
  it('refuses a second integrator, naming the holder and how long to wait', async () => {
    const redis = await testRedis();
    const world = testWorld();
    await acquire(redis, world, { owner: { host: 'build-7', pid: 4242 } });

    const second = acquire(redis, world, { owner: { host: 'laptop', pid: 99 } });
    await expect(second).rejects.toThrow(GenesisError);
    await expect(second).rejects.toMatchObject({
      code: 'integrator-running',
      message: expect.stringMatching(/already has an integrator: build-7 pid 4242, since \d{4}-\d\d-\d\dT.*\(fencing token \d+\)/),
      hint: expect.stringMatching(/another `genesis run` is integrating this world; stop it first, or wait 1[45] s if it died/),
    });
  });

  it('grants a released lock again, with a larger fencing token', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const first = await acquire(redis, world);
    await first.release();
    expect(await first.isHeld()).toBe(false);
    const second = await acquire(redis, world);
    expect(second.token).toBeGreaterThan(first.token);
    expect(await second.isHeld()).toBe(true);
  });

  it('hands out fencing tokens that only grow, across releases and take-overs', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lock = await acquire(redis, world);
      tokens.push(lock.token);
      // Alternate a clean release with a lock that vanishes under its holder (expired) and is taken over.
      if (i % 2 === 0) await lock.release();
      else await redis.del(`genesis:{${world}}:integrator`);
    }
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
    expect(new Set(tokens).size).toBe(5);
  });

  it('keeps fencing tokens growing after Redis lost the counter behind them', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const before = await acquire(redis, world);
    await before.release();
    // As after a Redis restart without persistence, which takes far longer than these 5 ms.
    await redis.del(`genesis:{${world}}:integrator-fence`);
    await sleep(5);
    const after = await acquire(redis, world);
    expect(after.token).toBeGreaterThan(before.token);
  });

  it('shows who holds the lock, and nobody once it is released', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const lock = await acquire(redis, world, { owner: { host: 'build-7', pid: 4242 } });
    expect(await IntegratorLock.readHolder(redis, world)).toMatchObject({
      owner: { host: 'build-7', pid: 4242 },
      token: lock.token,
      since: expect.any(Number),
    });
    await lock.release();
    expect(await IntegratorLock.readHolder(redis, world)).toBeNull();
  });

  it('keeps the lock past its ttl while the holder refreshes it', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const lock = await acquire(redis, world, { ttlMs: 300 });
    await sleep(1_000);
    expect(await lock.isHeld()).toBe(true);
    await expect(acquire(redis, world)).rejects.toMatchObject({ code: 'integrator-running' });
  });

  it('tells the holder when another integrator took the lock over, and leaves the new lock alone', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const old = await acquire(redis, world, { ttlMs: 300 });
    const lost = nextLoss(old);
    // As if the lock expired while its holder was cut off from Redis.
    await redis.del(`genesis:{${world}}:integrator`);
    const taker = await acquire(redis, world, { ttlMs: 5_000, owner: { host: 'build-8', pid: 7 } });

    expect(await lost).toEqual({
      reason: 'taken',
      holder: { owner: { host: 'build-8', pid: 7 }, token: taker.token, since: expect.any(Number) },
    });
    expect(await old.isHeld()).toBe(false);
    await old.release();
    expect(await taker.isHeld()).toBe(true);
    // A callback registered after the loss still hears of it.
    expect((await nextLoss(old)).reason).toBe('taken');
  });

  it('gives the lock up when no refresh gets through to Redis within its ttl', async () => {
    const redis = await testRedis();
    const lock = await acquire(redis, testWorld(), { ttlMs: 300 });
    const lost = nextLoss(lock);
    const cutAt = performance.now();
    redis.disconnect();
    expect(await lost).toEqual({ reason: 'unconfirmed' });
    expect(performance.now() - cutAt).toBeLessThan(700);
  });

  it('frees the world a ttl after its integrator process is killed', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const holder = spawnHolder(world, 600);
    const acquired = await holder.next();
    if (acquired.event !== 'acquired') throw new Error(`unexpected ${JSON.stringify(acquired)}`);
    await expect(acquire(redis, world)).rejects.toMatchObject({
      code: 'integrator-running',
      message: expect.stringContaining(`pid ${holder.child.pid}`),
    });

    holder.child.kill('SIGKILL');
    const killedAt = performance.now();
    let lock: IntegratorLock | undefined;
    while (lock === undefined) {
      lock = await acquire(redis, world).catch(() => undefined);
      if (lock === undefined) await sleep(50);
    }
    expect(performance.now() - killedAt).toBeLessThan(1_500);
    expect(lock.token).toBeGreaterThan(acquired.token);
  });

  it('tells a paused holder on resume that it lost the lock, and its clean-up spares the new holder', async () => {
    const redis = await testRedis();
    const world = testWorld();
    const holder = spawnHolder(world, 400);
    expect((await holder.next()).event).toBe('acquired');

    // A stopped process (a long GC pause, a suspended VM) refreshes nothing; its lock expires.
    holder.child.kill('SIGSTOP');
    await sleep(600);
    const taker = await acquire(redis, world, { ttlMs: 5_000 });
    holder.child.kill('SIGCONT');

    const event = await holder.next();
    expect(event.event).toBe('lost');
    if (event.event === 'lost') expect(['taken', 'unconfirmed']).toContain(event.loss.reason);
    await sleep(100);
    expect(await taker.isHeld()).toBe(true);
  });
});
