import { describe, expect } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { git } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { checkWorldInvariants, fastClusterEnv, makeTaskWorld } from '../../helpers/distributed-world.js';
import { itWith } from '../../helpers/services.js';

const REDIS = 'redis://127.0.0.1:6379';

describe('tip gating on BullMQ workers', () => {
  itWith('redis')('gates each change once on the worker, on the place the scheduler gave it over Redis, and lands it as gated', async () => {
    const { f, tasks } = await makeTaskWorld(4, 400, 4);
    const env = fastClusterEnv();
    const workers = [0, 1].map(() => startCli(['worker', '--redis', REDIS, '--json', '--concurrency', '2'], env));
    await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
    const scheduler = startCli(['run', '--world', f.world.path, '--redis', REDIS, '--json'], env);
    expect(await Promise.race([scheduler.exited, new Promise((r) => setTimeout(() => r('timeout'), 150_000))])).toBe(0);
    for (const w of workers) w.child.kill('SIGTERM');

    expect(await checkWorldInvariants(f, tasks)).toEqual([]);
    const records = await new GitLedger(f.world.path).readAll();
    const landed = (await readAcceptedHistory(f.world.path, 'main')).filter((c) => c.episode).reverse();
    expect(landed).toHaveLength(4);
    // Each was gated by its worker on what landed just before it: the place the scheduler reserved.
    for (const [i, c] of landed.entries()) {
      const r = records.find((x) => x.id === c.episode)!;
      expect(r).toMatchObject({ outcome: 'accepted', candidate: c.commit, gatedOn: i === 0 ? f.commit : landed[i - 1]!.commit });
      expect(r.worker).not.toContain(`:${scheduler.child.pid}:`);
    }
    // Each worker's wait for its place was a wait told to the scheduler, begun and ended, like any other.
    const told = scheduler.lines.filter((l) => l.includes('"type":"wait"')).map((l) => JSON.parse(l) as { id: string; what: string | null });
    for (const c of landed) {
      const waits = told.filter((w) => w.id === c.episode).map((w) => w.what);
      expect(waits).toContainEqual(
        expect.stringMatching(/^the scheduler's answer: a place in its integration queue to gate on, or none \(then it gates on its base\), on worker \S+$/),
      );
      expect(waits.at(-1)).toBeNull();
    }
    // One gate per change: no verification on a tip was needed.
    expect((await git(['for-each-ref', 'refs/genesis/verifications/'], { cwd: f.world.path })).stdout).toBe('');
  });
});
