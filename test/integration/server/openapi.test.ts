import { afterEach, describe, expect, it } from 'vitest';
import { createWorldControl } from '../../../src/cli/commands/serve/world-control.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { OPENAPI_DOCUMENT } from '../../../src/server/api/openapi-document.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';
import { validateSchema } from './openapi-validator.js';

const TOKEN = 'a-token-long-enough-for-the-api';
const doc = OPENAPI_DOCUMENT as unknown as { paths: Record<string, Record<string, any>> };

let server: RunningServer | undefined;
let stopRun: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  // A run this test started must not outlive it, whatever failed.
  await stopRun?.().catch(() => undefined);
  await server?.close();
  server = undefined;
});

describe('the validator the API is checked with', () => {
  it('finds a wrong type, a missing field, a value outside an enum and a value no alternative takes', () => {
    const root = OPENAPI_DOCUMENT as any;
    expect(
      validateSchema(
        { ok: true, world: 'w', name: 'n', stamp: 's', queueBoard: null },
        root.paths['/api/health'].get.responses['200'].content['application/json'].schema,
        root,
      ),
    ).toEqual([]);
    expect(validateSchema({ running: 'yes' }, { $ref: '#/components/schemas/RunStatus' }, root)).toEqual(
      expect.arrayContaining(['$: missing holder', '$.running: expected boolean, got "yes"']),
    );
    expect(validateSchema('later', { type: 'string', enum: ['now'] }, root)).toEqual(['$: "later" is not one of ["now"]']);
    expect(validateSchema(1.5, { anyOf: [{ type: 'integer' }, { type: 'null' }] }, root)).toHaveLength(1);
    expect(validateSchema([1, 'x'], { type: 'array', items: { type: 'integer' } }, root)).toEqual(['$[1]: expected integer, got "x"']);
  });
});

describe('the HTTP API against its OpenAPI document', () => {
  itWith('bwrap')(
    'answers every route it documents with the documented shape: reads, adding a task, starting and stopping a run, errors',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 },
          tasks: [
            { id: 'a', title: 'module a', paths: ['src/a.js'] },
            { id: 'b', title: 'module b', paths: ['src/b.js'] },
            { id: 'c', title: 'module c', paths: ['src/c.js'], review: true },
            { id: 'd', title: 'module d', paths: ['src/d.js'], review: true },
          ],
        }),
        // a works long enough for the run to be stopped while it does; b fails until it is blocked.
        // c and d wait for a person once their gates pass.
        recording: {
          a: [{ say: 'working on a', sleepMs: 150_000, write: { 'src/a.js': GOOD_A } }],
          b: [{ exit: 1 }, { exit: 1 }],
          c: [{ write: { 'src/c.js': 'export const c = 1;\n' } }],
          d: [{ write: { 'src/d.js': 'export const d = 1;\n' } }],
        },
      });
      const control = createWorldControl(f.world, { runArgs: ['--sandbox', 'bwrap'] });
      stopRun = () => control.stopRun();
      server = await startServer({ world: f.world, port: 0, token: TOKEN, control });
      const seen = new Set<string>();

      /** Calls a route and checks its answer against the document: the status is listed, the body has its schema. */
      async function call(
        method: 'get' | 'post',
        route: string,
        url: string,
        body?: unknown,
        token: string | null = TOKEN,
      ): Promise<{ status: number; body: any }> {
        const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
        if (token) headers.authorization = `Bearer ${token}`;
        const response = await fetch(new URL(url, server!.url), {
          method: method.toUpperCase(),
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const operation = doc.paths[route]?.[method];
        expect(operation, `${method} ${route} is not in the document`).toBeDefined();
        const documented = operation.responses[String(response.status)];
        const text = await response.text();
        expect(documented, `${method} ${route} answered ${response.status}, which the document does not list: ${text}`).toBeDefined();
        const [type, media] = Object.entries(documented.content as Record<string, { schema: any }>)[0]!;
        expect(response.headers.get('content-type') ?? '').toContain(type);
        const parsed = type === 'application/json' ? JSON.parse(text) : text;
        expect(validateSchema(parsed, media.schema, OPENAPI_DOCUMENT as any), `${method} ${route} ${response.status}`).toEqual([]);
        seen.add(`${method} ${route} ${response.status}`);
        return { status: response.status, body: parsed };
      }

      const served = await call('get', '/api/openapi.json', '/api/openapi.json');
      expect(served.body.openapi).toBe('3.1.0');
      expect(served.body).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
      await call('get', '/api/health', '/api/health');
      expect((await call('get', '/api/run', '/api/run')).body).toEqual({ running: false, holder: null });
      await call('get', '/api/overview', '/api/overview');
      await call('get', '/api/tasks', '/api/tasks');
      await call('get', '/api/integration', '/api/integration');
      await call('get', '/api/reliability', '/api/reliability');
      await call('get', '/metrics', '/metrics');
      expect((await call('get', '/api/history', '/api/history?limit=0')).status).toBe(400);

      // Adding a task: refused without the token, then added through the gate, then refused twice.
      const task = { id: 'x', title: 'module x', paths: ['src/x.js'], description: 'export x' };
      expect((await call('post', '/api/tasks', '/api/tasks', task, null)).body.error.code).toBe('token-required');
      const added = await call('post', '/api/tasks', '/api/tasks', task);
      expect(added).toMatchObject({ status: 201, body: { task: 'x' } });
      const history = (await call('get', '/api/history', '/api/history')).body.commits;
      expect(history[0]).toMatchObject({ commit: added.body.commit, made: 'task-add' });
      expect(history.at(-1).made).toBe('init');
      expect((await call('post', '/api/tasks', '/api/tasks', task)).body.error.code).toBe('task-exists');
      expect((await call('post', '/api/tasks', '/api/tasks', { id: 'y', title: 'y', paths: ['src/y.js'], dependsOn: ['nope'] })).status).toBe(400);
      expect((await call('post', '/api/tasks/{id}/retry', '/api/tasks/a/retry', {})).body.error.code).toBe('task-not-blocked');
      expect((await call('post', '/api/tasks/{id}/retry', '/api/tasks/zz/retry', {})).body.error.code).toBe('task-not-found');

      // A run, started and stopped over HTTP.
      expect((await call('post', '/api/run/stop', '/api/run/stop', {})).body.error.code).toBe('no-run');
      const started = await call('post', '/api/run', '/api/run', {});
      expect(started.body).toMatchObject({ started: true, holder: expect.stringContaining(`(pid ${started.body.pid})`) });
      expect((await call('post', '/api/run', '/api/run', {})).body.error.code).toBe('run-in-progress');
      expect((await call('get', '/api/run', '/api/run')).body.running).toBe(true);
      const ledger = new GitLedger(f.world.path);
      // Episode a is under way (its agent sleeps) once the ledger or the overview shows it running.
      for (let i = 0; i < 100 && (await call('get', '/api/overview', '/api/overview')).body.episodes.running === 0; i++)
        await new Promise((r) => setTimeout(r, 200));
      await call('get', '/api/episodes', '/api/episodes?outcome=running');
      const live = (await call('get', '/api/timeline', '/api/timeline')).body;
      expect(live.slots.flatMap((slot: any) => slot.episodes).some((e: any) => e.outcome === 'running' && e.bars.length > 0)).toBe(true);
      const stateOfB = async () => (await call('get', '/api/tasks', '/api/tasks')).body.tasks.find((t: any) => t.id === 'b').state;
      for (let i = 0; i < 150 && (await stateOfB()) !== 'blocked'; i++) await new Promise((r) => setTimeout(r, 200));
      // Reviews: c and d wait; one approved, one rejected, neither twice.
      const reviews = async () => (await call('get', '/api/reviews', '/api/reviews')).body.reviews as Array<{ id: string; task: string }>;
      for (let i = 0; i < 300 && (await reviews()).length < 2; i++) await new Promise((r) => setTimeout(r, 200));
      const waiting = await reviews();
      expect(waiting.map((r) => r.task).sort()).toEqual(['c', 'd']);
      const [c, d] = ['c', 'd'].map((t) => waiting.find((r) => r.task === t)!.id);
      expect((await call('post', '/api/reviews/{id}/approve', `/api/reviews/${c}/approve`, {})).body.decision).toMatchObject({
        episode: c,
        decision: 'approve',
      });
      expect((await call('post', '/api/reviews/{id}/reject', `/api/reviews/${d}/reject`, { note: 'name it d2' })).body.decision).toMatchObject({
        decision: 'reject',
        note: 'name it d2',
      });
      expect((await call('post', '/api/reviews/{id}/approve', `/api/reviews/${d}/approve`, {})).status).toBe(409);
      // The approved change lands while the run goes on; a done task can be reopened.
      const stateOf = async (id: string) => (await call('get', '/api/tasks', '/api/tasks')).body.tasks.find((t: any) => t.id === id)?.state;
      for (let i = 0; i < 300 && (await stateOf('c')) !== 'done'; i++) await new Promise((r) => setTimeout(r, 200));
      const reopened = await call('post', '/api/tasks/{id}/reopen', '/api/tasks/c/reopen', { reason: 'c must export a function' });
      expect(reopened).toMatchObject({ status: 201, body: { task: 'c' } });
      const stop = await call('post', '/api/run/stop', '/api/run/stop', {});
      expect(stop.body.pid).toBe(started.body.pid);
      for (let i = 0; i < 150 && (await call('get', '/api/run', '/api/run')).body.running; i++) await new Promise((r) => setTimeout(r, 200));
      expect((await call('get', '/api/run', '/api/run')).body.running).toBe(false);
      const stopped = (await ledger.readAll()).find((r) => r.task === 'a');
      expect(stopped, 'the stopped run recorded episode a').toBeDefined();
      expect(stopped!.status).toBe('final');

      const retried = await call('post', '/api/tasks/{id}/retry', '/api/tasks/b/retry', { note: 'try again' });
      expect(retried.body).toMatchObject({ retry: { task: 'b', note: 'try again' }, task: { id: 'b', state: 'pending' } });
      const episodes = await call('get', '/api/episodes', '/api/episodes');
      await call('get', '/api/episodes/{id}', `/api/episodes/${episodes.body.episodes[0].id}`);
      await call('get', '/api/episodes/{id}', '/api/episodes/20990101-000000-000-abcdef');
      expect((await call('get', '/api/episodes', '/api/episodes?outcome=nonsense')).status).toBe(400);
      await call('get', '/api/timeline', '/api/timeline?limit=2');
      expect((await call('get', '/api/timeline', '/api/timeline?limit=0')).status).toBe(400);

      // The event stream: headers only (it never ends by itself).
      const events = new AbortController();
      const stream = await fetch(new URL('/api/events', server.url), { signal: events.signal });
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      events.abort();
      seen.add('get /api/events 200');

      // Every route of the document was called and answered as documented.
      const routes = Object.entries(doc.paths).flatMap(([route, ops]) => Object.keys(ops).map((method) => `${method} ${route}`));
      for (const route of routes)
        expect(
          [...seen].some((s) => s.startsWith(`${route} 2`)),
          `${route} never answered with success`,
        ).toBe(true);
      // And every route the server has is in the document.
      const servedRoutes = server.app.routes
        .filter((r) => r.method !== 'ALL' && (r.path.startsWith('/api/') || r.path === '/metrics'))
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([a-z]+)/g, '{$1}')}`);
      expect([...new Set(servedRoutes)].filter((r) => !routes.includes(r))).toEqual([]);
    },
    240_000,
  );
});
