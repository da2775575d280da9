import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { RedisPathLeases } from '../../../src/queue/redis/path-leases.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { runWorld } from '../../../src/schedule/run/run-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readLiveWaits } from '../../../src/schedule/live-waits.js';
import { itWith } from '../../helpers/services.js';
import { clusterTestRun } from './cluster-test-run.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { testRedis, testWorld } from './redis-test-world.js';

/**
 * A lease refused in the middle of a run, in the real Redis lease store: after the run started
 * (and released what an earlier run left), another holder takes task b's paths while task a runs
 * (a duplicate run of a closed episode re-took its lease, or a Redis restart brought back a lease
 * released just before it). When a is done, b cannot start and nothing else runs.
 */
describe('a path lease refused mid-run (Redis lease store)', () => {
  itWith('redis')(
    'waits for the paths, uncharged, and lands the task once the other holder lets go, instead of stopping blocked',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({ parallelism: 1, verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 } }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 300 }], b: [{ write: { 'src/b.js': GOOD_B } }] },
      });
      const redis = await testRedis();
      const worldKey = testWorld();
      const leases = new RedisPathLeases(redis, worldKey);
      // The other holder, as another process sees the store.
      const other = new RedisPathLeases(redis, worldKey, { ttlMs: 60_000 });
      const events: RunEvent[] = [];
      const planted: Array<Promise<boolean>> = [];
      const released: Array<Promise<void>> = [];
      const summary = await runEmbedded({
        world: f.world,
        sandbox: f.sandbox,
        leases,
        onEvent: (e) => {
          events.push(e);
          if (e.type === 'episode-start' && e.task === 'a') planted.push(other.tryAcquire('duplicate-of-a-closed-episode', ['src/b.js']));
          // The other holder lets go once the run has shown it waits for it, where status and the dashboard read waits too.
          if (e.type === 'lease-wait' && released.length === 0)
            released.push(leaseWaitShown(f.world.scratchDir).then(() => other.release('duplicate-of-a-closed-episode')));
        },
      });
      expect(await Promise.all(planted)).toEqual([true]);
      expect(summary.stop).toEqual({ kind: 'done' });
      expect(released).toHaveLength(1);
      expect(summary).toMatchObject({ accepted: 2, rejected: 0, failed: 0 });
      expect(events.find((e) => e.type === 'lease-wait')).toMatchObject({ task: 'b' });
      // A wait as any other, told once, and ended when b's episode started.
      const waits = events.filter((e) => e.type === 'wait' && e.id === 'b:lease');
      expect(waits).toEqual([
        { type: 'wait', id: 'b:lease', task: 'b', what: 'the lease of its paths, which a holder outside this run keeps' },
        { type: 'wait', id: 'b:lease', task: 'b', what: null },
      ]);
      expect(events.indexOf(waits[1]!)).toBe(events.findIndex((e) => e.type === 'episode-start' && e.task === 'b') + 1);
      // The wait cost b nothing: its one episode is its first attempt.
      const b = (await new GitLedger(f.world.path).readAll()).filter((r) => r.task === 'b');
      expect(b.map((r) => [r.attempt, r.outcome])).toEqual([[1, 'accepted']]);
      expect(await leases.holders()).toEqual([]);
    },
    120_000,
  );
});

describe('a path lease lost mid-run (Redis dropped it) over BullMQ', () => {
  itWith('redis')(
    'is taken again by the scheduler for the episode still running, so no other episode may take its paths meanwhile',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({ parallelism: 1, verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 } }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 4000 }], b: [{ write: { 'src/b.js': GOOD_B } }] },
      });
      const { redis, worldKey, leases, options } = await clusterTestRun(f, { concurrency: 1, reconcileMs: 300 });
      // While a's agent works: Redis loses every lease of the world, then the lease store is watched.
      const watched: Array<Promise<string[]>> = [];
      const onEvent = (e: RunEvent) => {
        if (e.type !== 'episode-start' || e.task !== 'a') return;
        watched.push(
          sleep(1000)
            .then(() => redis.del(`genesis:{${worldKey}}:leases:expiries`, `genesis:{${worldKey}}:leases:records`))
            .then(() => sleep(1500))
            .then(() => leases.holders()),
        );
      };
      const summary = await runWorld({ world: f.world, onEvent, ...options });
      expect(summary.stop).toEqual({ kind: 'done' });
      const a = (await new GitLedger(f.world.path).readAll()).find((r) => r.task === 'a')!;
      // 1.5 s after the loss, a (whose agent works 4 s) holds its lease again.
      expect(await Promise.all(watched)).toEqual([[a.id]]);
      expect(await leases.holders()).toEqual([]);
    },
    120_000,
  );
});

/** Resolves once the run's waits (what genesis status --world and the dashboard show) name b's wait for its lease. */
async function leaseWaitShown(scratchDir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const waits = await readLiveWaits(scratchDir);
    if (waits.some((w) => w.task === 'b' && w.what.startsWith('the lease of its paths'))) return;
    await sleep(50);
  }
  throw new Error("the lease wait never reached the run's waits");
}
