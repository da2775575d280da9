import { describe, expect, it as plainIt } from 'vitest';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import type { LeaseStore } from '../../../src/queue/lease-store.js';
import { MemoryLeaseStore } from '../../../src/queue/memory/memory-lease-store.js';
import { itWith } from '../../helpers/services.js';
import { testRedis, testWorld } from './redis-test-world.js';

/**
 * One contract, two stores: what the run loop relies on from a LeaseStore holds the same in
 * process and in Redis (all or nothing, no overlap, renew and release by holder, a holder
 * re-taking its own lease, release only by the scheduler once the change is integrated).
 */
const stores: Array<[string, typeof plainIt, () => Promise<LeaseStore>]> = [
  ['memory', plainIt, async () => new MemoryLeaseStore()],
  ['redis', itWith('redis'), async () => new RedisPathLeases(await testRedis(), testWorld())],
];

for (const [name, it, make] of stores) {
  describe(`the ${name} lease store`, () => {
    it('grants disjoint paths to two holders and refuses overlapping ones', async () => {
      const leases = await make();
      expect(await leases.tryAcquire('e1', ['src/a.js'])).toBe(true);
      expect(await leases.tryAcquire('e2', ['src/b.js'])).toBe(true);
      expect(await leases.tryAcquire('e3', ['src/**'])).toBe(false);
      expect(await leases.tryAcquire('e4', ['src/a.js', 'lib/x.js'])).toBe(false);
      // All or nothing: e4 got no part of its paths.
      expect(await leases.tryAcquire('e5', ['lib/x.js'])).toBe(true);
    });

    it("lets a holder take its own lease again (a worker re-taking the scheduler's lease for the same episode)", async () => {
      const leases = await make();
      expect(await leases.tryAcquire('e1', ['src/a.js'])).toBe(true);
      expect(await leases.tryAcquire('e1', ['src/a.js'])).toBe(true);
      expect(await leases.renew('e1')).toBe(true);
    });

    it('keeps a lease until its holder releases it, then frees its paths', async () => {
      const leases = await make();
      await leases.tryAcquire('e1', ['src/a.js']);
      expect(await leases.renew('e1')).toBe(true);
      expect(await leases.tryAcquire('e2', ['src/a.js'])).toBe(false);
      await leases.release('e1');
      expect(await leases.renew('e1')).toBe(false);
      expect(await leases.tryAcquire('e2', ['src/a.js'])).toBe(true);
    });

    it('lists its live holders, so a starting run can release those it does not take over', async () => {
      const leases = await make();
      await leases.tryAcquire('e1', ['src/a.js']);
      await leases.tryAcquire('e2', ['src/b.js']);
      expect((await leases.holders()).sort()).toEqual(['e1', 'e2']);
      await leases.release('e1');
      expect(await leases.holders()).toEqual(['e2']);
    });

    it('ignores the release of a holder it does not know', async () => {
      const leases = await make();
      await leases.tryAcquire('e1', ['src/a.js']);
      await leases.release('nobody');
      expect(await leases.renew('e1')).toBe(true);
      expect(await leases.renew('nobody')).toBe(false);
    });
  });
}
