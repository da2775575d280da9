import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listWorkers, startHeartbeat } from '../../../src/queue/redis/worker-registry.js';
import { createServerApp } from '../../../src/server/create-app.js';
import { startServer } from '../../../src/server/start-server.js';
import { git } from '../../../src/git/git.js';
import { readTaskRetries, writeTaskRetry } from '../../../src/world/task-retries.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { itWith } from '../../helpers/services.js';
import { makeWorld } from '../../helpers/world-fixture.js';
import { openEpisodeRecord } from '../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../src/ledger/git-ledger.js';
import { buildDashboardWorld, copyWorld, removeWorld } from './dashboard-world.js';

// Built once: a real run of a few seconds. Tests that change the world work on a copy.
const describeWithDocker = itWith('docker') === it ? describe : describe.skip;

describeWithDocker('the dashboard API on a world after a real run', () => {
  let worldPath = '';
  const copies: string[] = [];

  beforeAll(async () => {
    const built = await buildDashboardWorld();
    expect(built.summary.stop.kind).toBe('blocked');
    worldPath = built.path;
  }, 120_000);

  afterAll(async () => {
    for (const path of [worldPath, ...copies]) if (path) await removeWorld(path);
  });

  async function appFor(path = worldPath) {
    return createServerApp({ world: await LocalWorld.open(path) }).app;
  }

  async function getJson(path: string, url: string): Promise<any> {
    const response = await (await appFor(path)).request(url);
    expect(response.status, await response.clone().text()).toBe(200);
    return response.json();
  }

  async function writableCopy(): Promise<WorldRepo> {
    const world = await copyWorld(worldPath);
    copies.push(world.path);
    return world;
  }

  const post = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

  it('says on the overview that the run is blocked, and counts tasks and episodes by state', async () => {
    const o = await getJson(worldPath, '/api/overview');
    expect(o.run.state).toBe('blocked');
    expect(o.run.why).toContain('a (check-failed), e (outside-paths)');
    expect(o.tasks).toMatchObject({ total: 5, done: 2, blocked: 2, pending: 1, running: 0, queuedForRetry: 0 });
    expect(o.episodes).toMatchObject({ total: 7, accepted: 2, rejected: 4, failed: 1, running: 0 });
    expect(o.world).toMatchObject({ name: 'fixture', branch: 'main', maxAttempts: 2 });
    expect(await getJson(worldPath, '/api/health')).toMatchObject({ ok: true, name: 'fixture', queueBoard: null });
  });

  itWith('redis')('lists the workers alive in the distributed queue on the overview when Redis is given', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const id = `test-${randomUUID()}`;
    const heartbeat = await startHeartbeat(redis, { id, host: 'elsewhere', pid: 7, concurrency: 2, queue: 'episodes' });
    try {
      heartbeat.setEpisodes(['20990101-000000-000-abcdef']);
      const app = createServerApp({ world: await LocalWorld.open(worldPath), listWorkers: () => listWorkers(redis) }).app;
      const o = (await (await app.request('/api/overview')).json()) as any;
      expect(o.cluster.error).toBeNull();
      expect(o.cluster.workers.find((w: any) => w.id === id)).toMatchObject({ host: 'elsewhere', pid: 7, concurrency: 2 });
      const down = createServerApp({ world: await LocalWorld.open(worldPath), listWorkers: () => Promise.reject(new Error('connection refused')) }).app;
      expect(((await (await down.request('/api/overview')).json()) as any).cluster).toEqual({ workers: [], error: 'connection refused' });
      expect((await getJson(worldPath, '/api/overview')).cluster).toBeNull();
    } finally {
      await heartbeat.stop();
      redis.disconnect();
    }
  });

  it('lists the accepted history newest first with task, agent, attempt and gate summary', async () => {
    const h = await getJson(worldPath, '/api/history');
    expect(h.commits.map((c: any) => c.task)).toEqual(['c', 'b', null]);
    expect(h.commits.map((c: any) => c.made)).toEqual(['episode', 'episode', 'init']);
    expect(h.commits[1]).toMatchObject({ task: 'b', attempt: 2, agent: 'script' });
    // Gated on a tip, the trailer may name the verification instead of quoting it; the verdict is read from its record.
    expect(h.commits[1].verdict).toContain('check:b ok');
    expect(h.commits[1].verification).toBeTruthy();
    // b took two episodes (one failed) from its first attempt to its landing; the script agent reports no cost.
    expect(h.commits[1].spend).toMatchObject({ episodes: 2, costUsd: null, episodesWithoutCost: 2 });
    expect(h.commits[1].spend.toLandingMs).toBeGreaterThan(0);
    expect(h.commits[2].spend).toBeNull();
  });

  it('filters the episodes by task and by outcome', async () => {
    const all = await getJson(worldPath, '/api/episodes');
    expect(all.total).toBe(7);
    const ofA = await getJson(worldPath, '/api/episodes?task=a&outcome=rejected');
    expect(ofA.episodes.map((e: any) => [e.task, e.attempt, e.outcome, e.reason])).toEqual([
      ['a', 2, 'rejected', 'check-failed'],
      ['a', 1, 'rejected', 'check-failed'],
    ]);
    const failed = await getJson(worldPath, '/api/episodes?outcome=failed');
    expect(failed.episodes).toMatchObject([{ task: 'b', reason: 'agent-exit' }]);
    expect(failed.episodes[0].durationMs).toBeGreaterThan(0);
  });

  it('returns one episode with its prompt, agent log, diff, gate log and the reason it was rejected', async () => {
    const [rejected] = (await getJson(worldPath, '/api/episodes?task=a')).episodes;
    const e = await getJson(worldPath, `/api/episodes/${rejected.id}`);
    expect(e.record).toMatchObject({ task: 'a', outcome: 'rejected', reason: 'check-failed' });
    expect(e.record.signature).toBeTruthy();
    expect(e.task).toEqual({ id: 'a', title: 'module a' });
    expect(e.artifacts.prompt).toContain('module a');
    expect(e.artifacts.agentLog).toContain('writing a (wrongly)');
    expect(e.artifacts.diff).toContain("+export const a = () => 'not a';");
    expect(e.artifacts.gateLog).toContain('a says a');
    // The reflection it left is what the next attempt's prompt says about it.
    expect(e.reflection).toContain(`attempt ${e.record.attempt}: rejected (check-failed)`);
    expect(e.reflection).toContain('gate log (tail):');
  });

  it('answers an unknown episode with 404 and a hint', async () => {
    const response = await (await appFor()).request('/api/episodes/20990101-000000-000-abcdef');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'episode-not-found', hint: expect.stringContaining('/api/episodes') } });
    expect((await (await appFor()).request('/api/episodes/..%2F..%2Fetc')).status).toBe(404);
  });

  it('shows the blocked task on the board with its last reason and signature, and the task waiting on it', async () => {
    const board = await getJson(worldPath, '/api/tasks');
    const byId = Object.fromEntries(board.tasks.map((t: any) => [t.id, t]));
    expect(byId.a).toMatchObject({ state: 'blocked', failures: 2, failuresSinceRetry: 2, attemptsLeft: 0, queuedForRetry: null });
    expect(byId.a.lastFailure).toMatchObject({ attempt: 2, outcome: 'rejected', reason: 'check-failed' });
    expect(byId.a.lastFailure.signature).toBeTruthy();
    expect(byId.a.lastFailure.message).toContain('check:a');
    expect(byId.b).toMatchObject({ state: 'done', failures: 1, accepted: { attempt: 2 } });
    expect(byId.d).toMatchObject({ state: 'pending', waitingOn: 'a' });
    expect(byId.a.spend).toMatchObject({ episodes: 2, landed: 0, toLandingMs: null });
    expect(byId.b.spend).toMatchObject({ episodes: 2, landed: 1 });
    expect(byId.d.spend).toBeNull();
  });

  it('measures p with its interval, the horizons and the chain chart from the ledger', async () => {
    const r = await getJson(worldPath, '/api/reliability');
    expect(r.stats.episodeSuccess).toMatchObject({ count: 2, of: 7, rate: 2 / 7 });
    expect(r.stats.horizons.map((h: any) => h.threshold)).toEqual([0.5, 0.8, 0.95]);
    expect(r.stats.rejectedByReason).toEqual([
      { reason: 'check-failed', count: 2 },
      { reason: 'outside-paths', count: 2 },
    ]);
    expect(r.chain.p).toBe(2 / 7);
    expect(r.chain.perEpisode[0]).toEqual({ n: 1, success: 2 / 7 });
    expect(r.chain.measured[0]).toMatchObject({ n: 1, chains: 7, successes: 2 });
    expect(r.acceptanceOverTime.buckets.reduce((sum: number, b: any) => sum + b.decided, 0)).toBe(7);
  });

  it('queues a blocked task for retry by writing a marker ref, and the board and overview show it', async () => {
    const world = await writableCopy();
    const app = createServerApp({ world }).app;
    const response = await app.request('/api/tasks/a/retry', post({ note: 'the test of a was fixed' }));
    expect(response.status, await response.clone().text()).toBe(201);
    const body = (await response.json()) as any;
    expect(body.task).toMatchObject({
      id: 'a',
      state: 'pending',
      failures: 2,
      failuresSinceRetry: 0,
      attemptsLeft: 2,
      queuedForRetry: { note: 'the test of a was fixed' },
    });
    expect(body.retry.ref).toMatch(/^refs\/genesis\/task-retries\/a\/\d{8}-\d{6}-\d{3}-[0-9a-f]{6}$/);

    const refs = (await git(['for-each-ref', '--format=%(refname)', 'refs/genesis/task-retries/'], { cwd: world.path })).stdout.trim().split('\n');
    expect(refs).toEqual([body.retry.ref]);
    expect(await readTaskRetries(world.path)).toMatchObject([{ task: 'a', note: 'the test of a was fixed', by: 'dashboard' }]);
    const overview = (await (await app.request('/api/overview')).json()) as any;
    expect(overview.run.state).toBe('idle');
    expect(overview.tasks).toMatchObject({ blocked: 1, pending: 2, queuedForRetry: 1 });
  });

  it('refuses to retry a task that is not blocked, an unknown task, and a malformed body', async () => {
    const app = await appFor();
    const notBlocked = await app.request('/api/tasks/b/retry', post({}));
    expect(notBlocked.status).toBe(409);
    expect(await notBlocked.json()).toMatchObject({ error: { code: 'task-not-blocked', message: 'task b is done; only a blocked task can be retried' } });
    const unknown = await app.request('/api/tasks/nope/retry', post({}));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'task-not-found', hint: 'the tasks are: a, b, c, d, e' } });
    expect((await app.request('/api/tasks/a/retry', post({ note: 42 }))).status).toBe(400);
    expect((await app.request('/api/tasks/a/retry', post({ note: 'x'.repeat(2001) }))).status).toBe(400);
    expect(await readTaskRetries(worldPath)).toEqual([]);
  });

  it('refuses a change posted as a form or from another origin, which a hostile page could send', async () => {
    const app = await appFor();
    const form = await app.request('/api/tasks/a/retry', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'note=x' });
    expect(form.status).toBe(415);
    const crossSite = await app.request('/api/tasks/a/retry', post({}, { origin: 'https://evil.example' }));
    expect(crossSite.status).toBe(403);
    expect(await readTaskRetries(worldPath)).toEqual([]);
  });

  it('serves the dashboard page and its scripts with a content security policy', async () => {
    const app = await appFor();
    const page = await app.request('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/ui/app.js">');
    expect((await app.request('/ui/app.js')).headers.get('content-type')).toContain('javascript');
    expect((await app.request('/ui/../../world-snapshot.ts')).status).toBe(404);
  });

  it('announces on the event stream that the world changed, within the polling interval', async () => {
    const world = await writableCopy();
    const server = await startServer({ world, port: 0, pollMs: 100 });
    try {
      const response = await fetch(`${server.url}api/events`);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const readUntil = async (needle: string) => {
        const deadline = Date.now() + 5_000;
        while (!text.includes(needle) && Date.now() < deadline) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
        return text.includes(needle);
      };
      expect(await readUntil('event: hello')).toBe(true);
      await writeTaskRetry(world.path, { task: 'a', note: 'from elsewhere' });
      expect(await readUntil('event: change')).toBe(true);
      await reader.cancel();
    } finally {
      await server.close();
    }
  });
});

describe('the running view in a distributed run', () => {
  itWith('redis')('names the worker whose heartbeat holds the episode, not the scheduler that opened its record', async () => {
    const { world } = await makeWorld({ recording: {}, sandbox: 'none' });
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    const workerId = `test-${randomUUID()}`;
    const episodeId = '20990101-000000-000-fedcba';
    // The scheduler opens the record under its own name (a pid of this host that is not running).
    const scheduler = `${hostname()}:2147483646`;
    await ledgerOf(world).write(openEpisodeRecord({ id: episodeId, world: 'fixture', task: 'a', attempt: 1, base: 'b', agent: 'script', worker: scheduler }));
    const heartbeat = await startHeartbeat(redis, { id: workerId, host: 'box-7', pid: 12, concurrency: 1, queue: 'episodes' });
    try {
      heartbeat.setEpisodes([episodeId]);
      await expect.poll(async () => (await listWorkers(redis)).find((w) => w.id === workerId)?.episodes).toEqual([episodeId]);
      const app = createServerApp({ world, listWorkers: () => listWorkers(redis) }).app;
      const board = (await (await app.request('/api/tasks')).json()) as any;
      expect(board.tasks.find((t: any) => t.id === 'a').running).toMatchObject({ episode: episodeId, worker: workerId, liveness: 'alive' });
      const overview = (await (await app.request('/api/overview')).json()) as any;
      expect(overview.running).toMatchObject([{ id: episodeId, worker: workerId, liveness: 'alive' }]);
      expect(overview.run.state).toBe('running');
      const timeline = (await (await app.request('/api/timeline')).json()) as any;
      expect(timeline.slots.flatMap((s: any) => s.episodes.map((e: any) => e.worker))).toEqual([workerId]);
      // Without the registry the record's own name is all there is, and that process is gone.
      const alone = (await (await createServerApp({ world }).app.request('/api/overview')).json()) as any;
      expect(alone.run.state).toBe('stale');
      expect(alone.workers).toEqual([{ worker: scheduler, liveness: 'gone', episodes: 1 }]);
    } finally {
      await heartbeat.stop();
      redis.disconnect();
      await rm(join(world.path, '..'), { recursive: true, force: true });
    }
  });
});
