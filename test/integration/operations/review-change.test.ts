import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const GOOD_C = "export const c = () => 'c';\n";
const C_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { c } from '../src/c.js';\ntest('c says c', () => assert.equal(c(), 'c'));\n";

describe('changes that wait for review', () => {
  itWith('bwrap')('land only once a person approves them, verified again on a head that moved; a rejection note reaches the next prompt', async () => {
    const tasks = ['a', 'b', 'c'].map((id) => ({ id, title: `module ${id}`, paths: [`src/${id}.js`], check: `node --test test/${id}.test.js` }));
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ review: 'all', parallelism: 3, retry: { maxAttempts: 3 }, tasks }),
      files: { 'test/c.test.js': C_TEST },
      recording: {
        a: [{ write: { 'src/a.js': GOOD_A } }],
        b: [{ write: { 'src/b.js': GOOD_B } }],
        c: [{ write: { 'src/c.js': GOOD_C } }, { write: { 'src/c.js': GOOD_C } }],
      },
    });
    const run = () => genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    const review = (...args: string[]) => genesis(['review', ...args, '--world', f.world.path]);
    const ledger = new GitLedger(f.world.path);
    const waiting = async () => JSON.parse((await review('ls', '--json')).stdout) as Array<{ id: string; task: string; changedFiles: string[] }>;

    const first = await run();
    expect(first.status, first.stdout + first.stderr).toBe(7);
    expect(first.stdout).toMatch(/passed the gate and wait for review/);
    expect((await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task)).toEqual([null]);
    const parked = await waiting();
    expect(parked.map((r) => [r.task, r.changedFiles]).sort()).toEqual([
      ['a', ['src/a.js']],
      ['b', ['src/b.js']],
      ['c', ['src/c.js']],
    ]);
    const id = (task: string) => parked.find((r) => r.task === task)!.id;
    expect(await ledger.read(id('a'))).toMatchObject({ status: 'running', outcome: 'awaiting-review' });

    expect((await review('approve', id('a'))).status).toBe(0);
    expect(await review('approve', id('b'), '--note', 'fine')).toMatchObject({ status: 0 });
    expect(await review('reject', id('c'), '--note', 'name the export after the module')).toMatchObject({ status: 0 });
    const twice = await review('approve', id('c'));
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain(`episode ${id('c')} was already rejected`);

    const second = await run();
    expect(second.status, second.stdout + second.stderr).toBe(7);
    expect((await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task).sort()).toEqual(['a', 'b', null].sort());
    // Both were gated on the first commit; the one that landed second was verified again on the first's.
    const landed = [await ledger.read(id('a')), await ledger.read(id('b'))];
    expect(landed.map((r) => r!.outcome)).toEqual(['accepted', 'accepted']);
    expect(landed.map((r) => r!.reason).sort()).toEqual([null, 'replayed'].sort());
    expect(await ledger.read(id('c'))).toMatchObject({ status: 'final', outcome: 'rejected', reason: 'review-rejected' });
    const [retry] = await waiting();
    expect(retry).toMatchObject({ task: 'c' });
    expect((await ledger.readArtifacts(retry!.id)).prompt).toContain('name the export after the module');

    expect((await review('approve', retry!.id)).status).toBe(0);
    const third = await run();
    expect(third.status, third.stdout + third.stderr).toBe(0);
    expect(await waiting()).toEqual([]);
  });
});
