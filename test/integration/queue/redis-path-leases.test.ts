import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import { patternSetsOverlap } from '../../../src/manifest/path-patterns.js';
import { itWith } from '../../helpers/services.js';
import { testRedis, testWorld } from './redis-test-world.js';

const it = itWith('redis');

async function leases(ttlMs?: number): Promise<RedisPathLeases> {
  return new RedisPathLeases(await testRedis(), testWorld(), ttlMs === undefined ? {} : { ttlMs });
}

describe('RedisPathLeases', () => {
  it('leases disjoint paths to two holders', async () => {
    const l = await leases();
    expect(await l.tryAcquire('e1', ['src/add.js'])).toBe(true);
    expect(await l.tryAcquire('e2', ['src/sub.js', 'lib/**'])).toBe(true);
    const listed = await l.list();
    expect(listed.map((lease) => [lease.holder, lease.paths])).toEqual(
      expect.arrayContaining([
        ['e1', ['src/add.js']],
        ['e2', ['src/sub.js', 'lib/**']],
      ]),
    );
    expect(listed).toHaveLength(2);
  });

  it('refuses paths that could share a file with another holder’s lease', async () => {
    const l = await leases();
    expect(await l.tryAcquire('e1', ['src'])).toBe(true);
    expect(await l.tryAcquire('e2', ['src/add.js'])).toBe(false);
    expect(await l.tryAcquire('e3', ['src/**/*.js'])).toBe(false);
    expect(await l.tryAcquire('e4', ['**/*.md'])).toBe(false);
    expect(await l.tryAcquire('e5', ['srcs/a.js'])).toBe(true);
    expect((await l.list()).map((lease) => lease.holder).sort()).toEqual(['e1', 'e5']);
  });

  it('grants all paths or none', async () => {
    const l = await leases();
    expect(await l.tryAcquire('e1', ['src/add.js'])).toBe(true);
    expect(await l.tryAcquire('e2', ['bin/calc.js', 'src/add.js'])).toBe(false);
    // bin/calc.js was not taken by the refused attempt.
    expect(await l.tryAcquire('e3', ['bin/calc.js'])).toBe(true);
  });

  it('extends the lease of a holder that asks again for its paths', async () => {
    const l = await leases(5_000);
    expect(await l.tryAcquire('e1', ['src'])).toBe(true);
    const [first] = await l.list();
    await sleep(20);
    expect(await l.tryAcquire('e1', ['src'])).toBe(true);
    const [second] = await l.list();
    expect(second?.expiresAt).toBeGreaterThan(first?.expiresAt ?? Infinity);
  });

  it('replaces the paths of a holder that asks for others, under the same overlap rule', async () => {
    const l = await leases();
    await l.tryAcquire('e1', ['src']);
    await l.tryAcquire('e2', ['docs']);
    expect(await l.tryAcquire('e1', ['docs/api.md'])).toBe(false);
    expect(await l.tryAcquire('e1', ['lib'])).toBe(true);
    expect(await l.tryAcquire('e3', ['src/add.js'])).toBe(true);
  });

  it('sets the expiry a ttl after now on the Redis server’s clock', async () => {
    const redis = await testRedis();
    const l = new RedisPathLeases(redis, testWorld(), { ttlMs: 10_000 });
    await l.tryAcquire('e1', ['src']);
    const [seconds, micros] = await redis.time();
    const serverNow = Number(seconds) * 1000 + Number(micros) / 1000;
    const [lease] = await l.list();
    expect(lease?.expiresAt).toBeGreaterThan(serverNow + 9_000);
    expect(lease?.expiresAt).toBeLessThanOrEqual(serverNow + 10_000);
  });

  it('keeps a lease alive while its holder renews it', async () => {
    const l = await leases(300);
    await l.tryAcquire('e1', ['src']);
    for (let i = 0; i < 8; i++) {
      await sleep(100);
      expect(await l.renew('e1')).toBe(true);
    }
    expect(await l.tryAcquire('e2', ['src/add.js'])).toBe(false);
  });

  it('lets a lease expire when its holder stops renewing it', async () => {
    const l = await leases(200);
    await l.tryAcquire('e1', ['src']);
    await sleep(350);
    expect(await l.list()).toEqual([]);
    expect(await l.tryAcquire('e2', ['src/add.js'])).toBe(true);
    // The dead holder learns it lost the lease, and cannot renew it back to life.
    expect(await l.renew('e1')).toBe(false);
  });

  it('frees the paths of a released holder, and ignores a holder it does not know', async () => {
    const l = await leases();
    await l.tryAcquire('e1', ['src']);
    await l.release('nobody');
    expect(await l.tryAcquire('e2', ['src/add.js'])).toBe(false);
    await l.release('e1');
    expect(await l.renew('e1')).toBe(false);
    expect(await l.tryAcquire('e2', ['src/add.js'])).toBe(true);
  });

  it('keeps the leases of two worlds apart', async () => {
    const redis = await testRedis();
    const a = new RedisPathLeases(redis, testWorld());
    const b = new RedisPathLeases(redis, testWorld());
    expect(await a.tryAcquire('e1', ['src'])).toBe(true);
    expect(await b.tryAcquire('e2', ['src'])).toBe(true);
  });

  it('never lets holders of overlapping paths hold them at the same time under contention', async () => {
    const world = testWorld();
    const connections = [await testRedis(), await testRedis(), await testRedis()];
    const pathSets = [
      ['src/**'],
      ['src/lib/a.ts', 'docs'],
      ['src/lib/b.ts'],
      ['docs/*.md'],
      ['test'],
      ['test/unit/x.test.ts', 'bench'],
      ['bench/**'],
      ['README.md'],
    ];
    const overlap = pathSets.map((a) => pathSets.map((b) => patternSetsOverlap(a, b)));
    type Interval = { set: number; acquiredAt: number; releasedAt: number };
    const intervals: Interval[] = [];
    let refused = 0;
    const deadline = performance.now() + 3_000;

    // Two contenders per path set, spread over three connections; every grant is a new holder.
    const contenders = pathSets.flatMap((paths, set) =>
      [0, 1].map(async (copy) => {
        const l = new RedisPathLeases(connections[(set * 2 + copy) % connections.length]!, world, { ttlMs: 10_000 });
        for (let n = 0; performance.now() < deadline; n++) {
          const holder = `set${set}-copy${copy}-${n}`;
          if (await l.tryAcquire(holder, paths)) {
            // Recorded inside the grant: after Redis granted it, before Redis is asked to release it.
            const acquiredAt = performance.now();
            await sleep(Math.random() * 3);
            intervals.push({ set, acquiredAt, releasedAt: performance.now() });
            await l.release(holder);
          } else {
            refused += 1;
            await sleep(Math.random() * 2);
          }
        }
      }),
    );
    await Promise.all(contenders);

    intervals.sort((x, y) => x.acquiredAt - y.acquiredAt);
    const violations: [Interval, Interval][] = [];
    let concurrentDisjoint = 0;
    for (let i = 0; i < intervals.length; i++) {
      const a = intervals[i]!;
      for (let j = i + 1; j < intervals.length && intervals[j]!.acquiredAt < a.releasedAt; j++) {
        const b = intervals[j]!;
        if (overlap[a.set]![b.set]) violations.push([a, b]);
        else concurrentDisjoint += 1;
      }
    }
    expect(violations).toEqual([]);
    // The test had teeth: many grants, real contention, and disjoint holders did run side by side.
    expect(intervals.length).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(100);
    expect(concurrentDisjoint).toBeGreaterThan(0);
    expect(await new RedisPathLeases(connections[0]!, world).list()).toEqual([]);
  });
});
