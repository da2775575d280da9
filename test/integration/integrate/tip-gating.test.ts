import { describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/audit-world.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { git } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

const BAD_B = "export const b = () => 'not b';\n";
/** How long a slow module waits before it loads: far longer than a failing gate takes, even on a loaded machine. */
const SLOW_MS = 15_000;
const GOOD_C = "export const c = () => 'c';\n";
const threeTasks = () =>
  baseManifest({
    parallelism: 3,
    tasks: [
      { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' },
      { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js' },
      { id: 'c', title: 'module c', paths: ['src/c.js'] },
    ],
  });

async function verificationRefs(f: FixtureWorld): Promise<string[]> {
  return (await git(['for-each-ref', '--format=%(refname)', 'refs/genesis/verifications/'], { cwd: f.world.path })).stdout.split('\n').filter(Boolean);
}

/** The audit of history, trailers and ledger (gates are not run again: the gate's own tests cover that). */
async function auditViolations(f: FixtureWorld) {
  return (await auditWorld({ world: f.world, sandbox: f.sandbox, sample: 0 })).findings.filter((x) => x.severity === 'violation');
}

describe('tip gating in process', () => {
  itWith('docker')('gates each of several changes once, on the changes ahead of it still being gated, and lands them as gated', async () => {
    // The agents end one after another while the first gates are still running.
    const f = await makeWorld({
      manifest: threeTasks(),
      recording: {
        a: [{ write: { 'src/a.js': GOOD_A } }],
        b: [{ write: { 'src/b.js': GOOD_B }, sleepMs: 300 }],
        c: [{ write: { 'src/c.js': GOOD_C }, sleepMs: 600 }],
      },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 3, rejected: 0 });
    // One gate per change: no verification on a tip was needed.
    expect(await verificationRefs(f)).toEqual([]);
    const records = await new GitLedger(f.world.path).readAll();
    const landed = (await readAcceptedHistory(f.world.path, 'main')).filter((c) => c.episode).reverse();
    // In the order their agents ended (a, b, c unless the machine is very busy), each on the one before.
    expect(landed.map((c) => c.task).sort()).toEqual(['a', 'b', 'c']);
    for (const [i, c] of landed.entries()) {
      const r = records.find((x) => x.id === c.episode)!;
      expect(r).toMatchObject({ outcome: 'accepted', commit: c.commit, candidate: c.commit, gatedOn: i === 0 ? f.commit : landed[i - 1]!.commit });
      expect(r.reason).not.toBe('replayed');
    }
    expect(await auditViolations(f)).toEqual([]);
  });

  itWith('docker')(
    'hands a change whose gate failed behind a change that then failed to the queue, which verifies it on its new place, with no gate on its base',
    async () => {
      // b's gate runs on the tip holding the bad a, whose check fails there with or without b. b's module
      // waits before it loads, so a's gate has failed long before b's can end: b's gate is stopped then, its
      // place rebuilt without a, and the queue's verification there (which waits for the module too) is its gate.
      const SLOW_GOOD_B = `await new Promise((r) => setTimeout(r, ${SLOW_MS}));\n${GOOD_B}`;
      const f = await makeWorld({
        recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': SLOW_GOOD_B }, sleepMs: 300 }] },
        manifest: baseManifest({ retry: { maxAttempts: 2 } }),
      });
      const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
      expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 2, rejected: 1 });
      const records = await new GitLedger(f.world.path).readAll();
      const b = records.find((r) => r.task === 'b')!;
      const badA = records.find((r) => r.task === 'a' && r.outcome === 'rejected')!;
      expect(badA).toMatchObject({ reason: 'check-failed' });
      // b's own gate judged the tip holding the bad a; the queue's verification on its new place is its gate.
      expect(b).toMatchObject({ outcome: 'accepted', base: f.commit, gatedOn: badA.candidate, handedOver: true, reason: 'replayed' });
      // Stopped when a failed, before b's module could load on the abandoned tip.
      expect(b.phases.gate).toBeGreaterThan(0);
      expect(b.phases.gate).toBeLessThan(SLOW_MS);
      expect(b.phases['gate-on-base']).toBeUndefined();
      expect(b.gate?.ok).toBe(true);
      expect(b.message).toMatch(/^verified on [0-9a-f]{12} /);
      expect(b.verification?.onto).not.toBe(badA.candidate);
      expect(await verificationRefs(f)).toHaveLength(1);
      // The gate that judged the abandoned tip is kept as evidence.
      const log = (await new GitLedger(f.world.path).readArtifacts(b.id)).gateLog;
      expect(log).toMatch(/fail/i);
      expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(await f.world.readFile('main', 'src/b.js')).toBe(SLOW_GOOD_B);
      expect(await auditViolations(f)).toEqual([]);
    },
    120_000,
  );

  itWith('docker')(
    'waits for a change ahead still being judged, and charges the failure to the change when that one passes, with no gate on its base',
    async () => {
      // a's module waits before it loads, so a's gate is still running when b's has failed: b also writes outside its
      // paths, which its gate finds before running anything (the tests it would run load a's module too).
      const SLOW_GOOD_A = `await new Promise((r) => setTimeout(r, 4000));\n${GOOD_A}`;
      const f = await makeWorld({
        recording: {
          a: [{ write: { 'src/a.js': SLOW_GOOD_A } }],
          b: [{ write: { 'src/b.js': GOOD_B, 'src/stray.js': 'export {};\n' }, sleepMs: 300 }, { write: { 'src/b.js': GOOD_B } }],
        },
        manifest: baseManifest({ retry: { maxAttempts: 2 } }),
      });
      const waits: Array<{ id: string; what: string }> = [];
      const summary = await runEmbedded({
        world: f.world,
        sandbox: f.sandbox,
        onEvent: (e) => {
          if (e.type === 'wait' && e.what) waits.push({ id: e.id, what: e.what });
        },
      });
      expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 2, rejected: 1 });
      const records = await new GitLedger(f.world.path).readAll();
      const a = records.find((r) => r.task === 'a')!;
      const failed = records.find((r) => r.task === 'b' && r.outcome === 'rejected')!;
      expect(a.outcome).toBe('accepted');
      expect(failed).toMatchObject({ reason: 'outside-paths', base: f.commit, gatedOn: a.commit });
      expect(failed.handedOver).toBeUndefined();
      expect(failed.phases['gate-on-base']).toBeUndefined();
      // It said what it waited on.
      expect(waits).toContainEqual({ id: failed.id, what: 'the changes ahead of it in the integration queue to be judged' });
      expect(await verificationRefs(f)).toEqual([]);
      expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);
      expect(await auditViolations(f)).toEqual([]);
    },
  );

  itWith('docker')('charges a failure on a tip that held only landed changes to the change, with no gate on its base', async () => {
    // b's agent outlasts a's episode: a lands while b works, so b's place is the accepted head, not its base.
    const f = await makeWorld({
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': BAD_B }, sleepMs: 8000 }, { write: { 'src/b.js': GOOD_B } }] },
      manifest: baseManifest({ retry: { maxAttempts: 2 } }),
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 2, rejected: 1 });
    const records = await new GitLedger(f.world.path).readAll();
    const a = records.find((r) => r.task === 'a')!;
    const failed = records.find((r) => r.task === 'b' && r.outcome === 'rejected')!;
    expect(a.outcome).toBe('accepted');
    expect(failed).toMatchObject({ reason: 'check-failed', base: f.commit, gatedOn: a.commit });
    expect(failed.phases.gate).toBeGreaterThan(0);
    expect(failed.phases['gate-on-base']).toBeUndefined();
    const log = (await new GitLedger(f.world.path).readArtifacts(failed.id)).gateLog;
    expect(log).not.toContain('own base');
    expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);
    expect(await auditViolations(f)).toEqual([]);
  });

  itWith('docker')('charges a failure on a speculative tip to the change when every change ahead passed there, with no gate on its base', async () => {
    // b's agent ends while a's gate runs, so b's place is on a, not landed yet; b's check fails there
    // slowly (its module waits before it loads), so a has passed by the time b's gate has failed twice.
    const SLOW_BAD_B = "await new Promise((r) => setTimeout(r, 3000));\nexport const b = () => 'not b';\n";
    const f = await makeWorld({
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': SLOW_BAD_B }, sleepMs: 300 }, { write: { 'src/b.js': GOOD_B } }] },
      manifest: baseManifest({ retry: { maxAttempts: 2 } }),
    });
    const bothGating: string[][] = [];
    const summary = await runEmbedded({
      world: f.world,
      sandbox: f.sandbox,
      onEvent: (e) => {
        if (e.type === 'integration' && e.entries.length === 2 && e.entries.every((x) => x.stage === 'gating')) bothGating.push(e.entries.map((x) => x.task));
      },
    });
    expect(summary).toMatchObject({ stop: { kind: 'done' }, accepted: 2, rejected: 1 });
    // b gated behind a while a's own gate was still running: its tip was speculative.
    expect(bothGating[0]).toEqual(['a', 'b']);
    const records = await new GitLedger(f.world.path).readAll();
    const a = records.find((r) => r.task === 'a')!;
    const failed = records.find((r) => r.task === 'b' && r.outcome === 'rejected')!;
    expect(failed).toMatchObject({ reason: 'check-failed', base: f.commit, gatedOn: a.commit });
    expect(failed.phases['gate-on-base']).toBeUndefined();
    expect(await verificationRefs(f)).toEqual([]);
    expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);
    expect(await auditViolations(f)).toEqual([]);
  });
});
