import { describe, expect, type it as plainIt } from 'vitest';
import type { LeaseStore } from '../../../src/queue/lease-store.js';
import { MemoryLeaseStore } from '../../../src/queue/memory/memory-lease-store.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import { composeEmbeddedRun } from '../../../src/compose/embedded-run.js';
import { runWorld, type RunOptions } from '../../../src/schedule/run/run-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { clusterTestRun } from './cluster-test-run.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

/**
 * Who holds a task's path lease between the stages of a run, the same in process and over BullMQ:
 * the scheduler takes it in the episode's name before the episode starts, holds it while the
 * episode runs (on a worker, which only re-takes and renews it), while the change waits in the
 * integration queue and is verified on a speculative tip, and releases it only once the episode's
 * record is final (landed or rejected), before it says so.
 *
 * Each event the run emits is matched with the holders the lease store has at that moment: the
 * memory store answers at once, and the Redis store is asked on the scheduler's own connection,
 * so the answer comes before any lease change the scheduler makes after the event.
 */
async function world(): Promise<FixtureWorld> {
  // Both agents work at once on the same head, and each gate takes long enough (a slow base test)
  // that neither change usually joins the queue before the other's gate chose its base: one change
  // is then verified again on top of the other.
  return makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 } }),
    files: { 'test/base.test.js': "import test from 'node:test';\ntest('the world is sane', () => new Promise((r) => setTimeout(r, 1500)));\n" },
    recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 1000 }], b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: 1000 }] },
  });
}

type Mode = (f: FixtureWorld) => Promise<{ leases: LeaseStore; options: Pick<RunOptions, 'ports' | 'distributed'> }>;

const inProcess: Mode = async (f) => {
  const leases = new MemoryLeaseStore();
  return { leases, options: { ports: await composeEmbeddedRun(f.world, { sandbox: f.sandbox, leases }) } };
};

const overBullmq: Mode = async (f) => {
  const { leases, options } = await clusterTestRun(f, { concurrency: 2, reconcileMs: 500 });
  return { leases, options };
};

interface Seen {
  what: string;
  /** The episodes the event says are open (they must hold their lease), or the one it says ended. */
  open: string[];
  ended: string | null;
  holders: string[];
}

const modes: Array<[string, typeof plainIt, Mode]> = [
  ['in process', itWith('bwrap'), inProcess],
  ['over BullMQ', itWith('redis'), overBullmq],
];

describe('the path lease of a task between the stages of a run', () => {
  for (const [name, it, mode] of modes) {
    it(`is held from the episode's start through its verification and landing, and released when its record is final (${name})`, async () => {
      const f = await world();
      const { leases, options } = await mode(f);
      const seen: Array<Promise<Seen>> = [];
      const watch = (what: string, open: string[], ended: string | null) => seen.push(leases.holders().then((holders) => ({ what, open, ended, holders })));
      const onEvent = (e: RunEvent) => {
        if (e.type === 'episode-start') watch(`${e.id} starts`, [e.id], null);
        if (e.type === 'integration')
          watch(
            `integration: ${e.entries.map((x) => `${x.id} ${x.stage}`).join(', ')}`,
            e.entries.map((x) => x.id),
            null,
          );
        if (e.type === 'episode-end') watch(`${e.id} ends ${e.outcome}`, [], e.id);
      };
      const summary = await runWorld({ world: f.world, onEvent, ...options });
      expect(summary.stop.kind).toBe('done');
      expect(summary.accepted).toBe(2);
      const all = await Promise.all(seen);
      const wrong = all.filter((s) => s.open.some((id) => !s.holders.includes(id)) || (s.ended !== null && s.holders.includes(s.ended)));
      expect(wrong).toEqual([]);
      // Each change was seen waiting in integration, and each one verified again on a tip (usually one: an
      // episode that gates on the speculative tip, as in-process episodes may, needs none) was seen verifying.
      const records = await new GitLedger(f.world.path).readAll();
      for (const r of records) expect(all.some((s) => s.what.startsWith('integration:') && s.open.includes(r.id))).toBe(true);
      for (const r of records.filter((x) => x.verification)) expect(all.some((s) => s.what.includes(`${r.id} verifying`))).toBe(true);
      expect(all.filter((s) => s.ended !== null)).toHaveLength(2);
      expect(await leases.holders()).toEqual([]);
    }, 120_000);
  }
});
