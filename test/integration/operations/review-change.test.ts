import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { createServerApp } from '../../../src/server/create-app.js';
import { startServer } from '../../../src/server/start-server.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const TOKEN = 'a-long-enough-test-token-0123456789';
const GOOD_C = "export const c = () => 'c';\n";
const C_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { c } from '../src/c.js';\ntest('c says c', () => assert.equal(c(), 'c'));\n";

describe('changes that wait for review', () => {
  itWith('bwrap')(
    'land only once a person approves them, verified again on a head that moved; a rejection note reaches the next prompt',
    async () => {
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
      // The board keeps their tasks busy though the run that parked them is gone.
      const board = (await (await createServerApp({ world: f.world }).app.request('/api/tasks')).json()) as { tasks: Array<{ id: string; state: string }> };
      expect(board.tasks.map((t) => t.state)).toEqual(['running', 'running', 'running']);

      expect((await review('approve', id('a'))).status).toBe(0);
      // b through the dashboard's API, behind its token.
      const server = await startServer({ world: f.world, host: '0.0.0.0', port: 0, token: TOKEN });
      try {
        const base = `http://127.0.0.1:${server.port}/api`;
        const { reviews } = (await (await fetch(`${base}/reviews`)).json()) as { reviews: Array<{ id: string; diff: string; gateLog: string }> };
        const shown = reviews.find((r) => r.id === id('b'))!;
        expect(shown.diff).toContain("+export const b = () => 'b';");
        expect(shown.gateLog).toContain('b says b');
        const approve = (headers: Record<string, string>) =>
          fetch(`${base}/reviews/${id('b')}/approve`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"note":"fine"}' });
        expect((await approve({})).status).toBe(401);
        const approved = await approve({ authorization: `Bearer ${TOKEN}` });
        expect(approved.status, await approved.clone().text()).toBe(201);
        expect(await approved.json()).toMatchObject({ decision: { episode: id('b'), decision: 'approve', note: 'fine' } });
        expect((await approve({ authorization: `Bearer ${TOKEN}` })).status).toBe(409);
      } finally {
        await server.close();
      }
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
      const [firstLanded, secondLanded] = landed.sort((x, y) => Date.parse(x!.endedAt!) - Date.parse(y!.endedAt!));
      expect(secondLanded).toMatchObject({ reason: 'replayed', verification: { onto: firstLanded!.commit } });
      expect(await ledger.read(id('c'))).toMatchObject({ status: 'final', outcome: 'rejected', reason: 'review-rejected' });
      const [retry] = await waiting();
      expect(retry).toMatchObject({ task: 'c' });
      expect((await ledger.readArtifacts(retry!.id)).prompt).toContain('name the export after the module');

      expect((await review('approve', retry!.id)).status).toBe(0);
      const third = await run();
      expect(third.status, third.stdout + third.stderr).toBe(0);
      expect(await waiting()).toEqual([]);
    },
    240_000,
  );
});
