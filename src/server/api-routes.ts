import { reflectionOf } from '../episode/prompt.js';
import { scoreOf } from '../world/history/accepted-history.js';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { GenesisError, type ErrorCode } from '../errors/genesis-error.js';
import { measureChangeCosts } from '../ledger/change-costs.js';
import { ledgerOf } from '../ledger/git-ledger.js';
import type { WorldRepo } from '../world/world-repo.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import type { WorldControl } from './world-control.js';
import type { ChangeFeed } from './projections/change-feed.js';
import { listEpisodeRows } from './projections/episode-rows.js';
import { errorResponse, jsonResponse } from './http/json.js';
import { readIntegrationView } from './projections/integration-view.js';
import { readWorldHold } from '../schedule/run/world-hold.js';
import { buildOverview } from './projections/overview.js';
import { buildReliabilityReport, type ReliabilityReport } from './projections/reliability-report.js';
import { MAX_RETRY_NOTE, retryTask } from './retry-task.js';
import { decideReview, listReviews, MAX_REVIEW_NOTE, readReview } from '../operations/review-change.js';
import { doneTasksOf } from '../world/history/done-tasks.js';
import type { SteeringOutcome } from '../operations/carry-out-steering.js';
import { buildTaskBoard } from './projections/task-board.js';
import { buildEpisodeTimeline } from './projections/episode-timeline.js';
import { withClusterHolders, type ClusterWorker, type LivenessProbe } from './projections/worker-liveness.js';
import type { WorldSnapshot, WorldSnapshots } from './projections/world-snapshot.js';

/** What the API routes read from and write to. */
export interface ApiContext {
  world: WorldRepo;
  snapshots: WorldSnapshots;
  feed: ChangeFeed;
  probe: LivenessProbe;
  now: () => Date;
  /** Names the requester in a retry marker (`dashboard 127.0.0.1`). */
  requester: (c: Context) => string;
  /**
   * Lands a person's reopening of a done task: through a running scheduler's lander when a run holds
   * the world, else under the run lock (steerWorld). Absent: the dashboard cannot reopen tasks.
   */
  reopen?: (input: { task: string; reason: string; by: string }) => Promise<SteeringOutcome>;
  /** Workers alive in the distributed queue's registry; absent without Redis. */
  listWorkers?: (() => Promise<ClusterWorker[]>) | undefined;
  /** Where the BullMQ board is mounted, or null (it is mounted after the API, if at all). */
  queueBoardPath: () => string | null;
  /** Milliseconds between keep-alive comments on the event stream. @default 15000 */
  keepAliveMs?: number;
  /** Starts and stops the run, adds tasks; absent: those routes answer 501. */
  control?: WorldControl | undefined;
}

const retryBody = z.object({ note: z.string().max(MAX_RETRY_NOTE).nullish() }).strict();
const runBody = z.object({ pastEvidence: z.boolean().optional() }).strict();
const stopBody = z.object({}).strict();
// The shape only: world.yaml's own schema judges the task when it is added.
const taskBody = z.object({ id: z.string().min(1), title: z.string().min(1), paths: z.array(z.string()).min(1) }).passthrough();
const reviewBody = z.object({ note: z.string().max(MAX_REVIEW_NOTE).nullish() }).strict();
const reopenBody = z.object({ reason: z.string().min(1).max(MAX_RETRY_NOTE) }).strict();
const OUTCOMES = ['accepted', 'rejected', 'failed', 'abandoned', 'outrun', 'running', 'awaiting-review'];

/** The JSON API under /api; src/server/README.md documents every route. */
export function createApiRoutes(ctx: ApiContext): Hono {
  const api = new Hono();
  let reliability: { stamp: string; report: ReliabilityReport } | null = null;

  api.onError((error) => errorResponse(error));
  api.notFound((c) =>
    jsonResponse(
      {
        error: {
          code: 'not-found' satisfies ErrorCode,
          message: `no API route ${c.req.method} ${c.req.path}`,
          hint: 'GET /api/openapi.json lists the routes',
        },
      },
      404,
    ),
  );

  api.get('/openapi.json', () => jsonResponse(OPENAPI_DOCUMENT));

  const control = (): WorldControl => {
    if (!ctx.control) throw new GenesisError('not-available', 'this server was started without control of the run', { hint: 'use genesis serve' });
    return ctx.control;
  };

  api.get('/run', async () => {
    const holder = ctx.control ? await ctx.control.runHolder() : null;
    return jsonResponse({ running: holder !== null, holder });
  });

  api.post('/run', async (c) => {
    const parsed = await parseBody(c, runBody, '{"pastEvidence": <optional boolean>}');
    const started = await control().startRun({ pastEvidence: parsed.pastEvidence ?? false });
    return jsonResponse({ started: true, ...started }, 202);
  });

  api.post('/run/stop', async (c) => {
    await parseBody(c, stopBody, '{}');
    return jsonResponse(await control().stopRun(), 202);
  });

  api.post('/tasks', async (c) => {
    const spec = await parseBody(c, taskBody, '{"id", "title", "paths": [...], and any other field of a task in world.yaml}');
    const commit = await control().addTask(spec);
    return jsonResponse({ commit, task: spec.id }, 201);
  });

  api.get('/health', async () => {
    const snapshot = await ctx.snapshots.current();
    return jsonResponse({ ok: true, world: snapshot.path, name: snapshot.manifest.name, stamp: snapshot.stamp, queueBoard: ctx.queueBoardPath() });
  });

  // The running view, with each episode named after the worker that holds it when Redis says who does.
  const runningView = async (): Promise<{ snapshot: WorldSnapshot; probe: LivenessProbe; cluster: Awaited<ReturnType<typeof readCluster>> | null }> => {
    const snapshot = await ctx.snapshots.current();
    if (!ctx.listWorkers) return { snapshot, probe: ctx.probe, cluster: null };
    const cluster = await readCluster(ctx.listWorkers);
    const held = withClusterHolders(snapshot.records, cluster.workers, ctx.probe);
    return { snapshot: { ...snapshot, records: held.records }, probe: held.probe, cluster };
  };

  api.get('/overview', async () => {
    const { snapshot, probe, cluster } = await runningView();
    const overview = buildOverview(snapshot, buildTaskBoard(snapshot, probe), probe, ctx.now());
    // Why no episode starts now (a usage limit, a model the world waits for), as the running scheduler wrote it.
    const hold = await readWorldHold(ctx.world.scratchDir, ctx.now().getTime());
    return jsonResponse({ ...overview, hold, cluster });
  });

  api.get('/history', async (c) => {
    const snapshot = await ctx.snapshots.current();
    const limit = positiveInt(c.req.query('limit'));
    const spent = new Map(measureChangeCosts(snapshot.records).changes.map(({ commit, task: _t, episode: _e, attempt: _a, ...rest }) => [commit, rest]));
    // The score the gate recorded: a commit gated in the queue carries none in its trailer, its verification does.
    const commits = await Promise.all(
      snapshot.history.slice(0, limit ?? undefined).map(async (c) => ({ ...c, score: await scoreOf(snapshot.path, c), spend: spent.get(c.commit) ?? null })),
    );
    return jsonResponse({ branch: snapshot.manifest.branch, head: snapshot.head, total: snapshot.history.length, commits });
  });

  api.get('/episodes', async (c) => {
    const snapshot = await ctx.snapshots.current();
    const outcome = c.req.query('outcome') || undefined;
    if (outcome && !OUTCOMES.includes(outcome))
      throw new GenesisError('bad-request', `unknown outcome "${outcome}"`, { hint: `use one of ${OUTCOMES.join(', ')}` });
    const rows = listEpisodeRows(snapshot.records, { task: c.req.query('task') || undefined, outcome });
    const limit = positiveInt(c.req.query('limit'));
    return jsonResponse({
      total: rows.length,
      episodes: rows.slice(0, limit ?? undefined),
      tasks: snapshot.manifest.tasks.map((t) => t.id),
      outcomes: OUTCOMES,
    });
  });

  api.get('/episodes/:id', async (c) => {
    const id = c.req.param('id');
    // Episode ids are ref names; anything else cannot be one, and must not reach git as a revision.
    if (!/^[0-9A-Za-z._-]+$/.test(id)) throw new GenesisError('episode-not-found', `no episode "${id}"`);
    const ledger = ledgerOf(ctx.world);
    const record = await ledger.read(id);
    if (!record) throw new GenesisError('episode-not-found', `no episode "${id}" in this world`, { hint: 'GET /api/episodes lists them' });
    const snapshot = await ctx.snapshots.current();
    const task = snapshot.manifest.tasks.find((t) => t.id === record.task);
    const artifacts = await ledger.readArtifacts(id);
    // The lines this episode left for the next attempt's prompt (empty when it left none).
    const reflection = reflectionOf(record, artifacts.gateLog);
    return jsonResponse({ record, task: task ? { id: task.id, title: task.title } : null, artifacts, reflection });
  });

  api.get('/timeline', async (c) => {
    const { snapshot } = await runningView();
    return jsonResponse(buildEpisodeTimeline(snapshot.records, ctx.now(), positiveInt(c.req.query('limit')) ?? undefined));
  });

  api.get('/integration', async () => jsonResponse(await readIntegrationView(ctx.world)));

  api.get('/tasks', async () => {
    const { snapshot, probe } = await runningView();
    return jsonResponse(buildTaskBoard(snapshot, probe));
  });

  api.post('/tasks/:id/retry', async (c) => {
    const parsed = retryBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) {
      throw new GenesisError('bad-request', `the body must be {"note": "<optional text, at most ${MAX_RETRY_NOTE} characters>"}`, {
        hint: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      });
    }
    const result = await retryTask(
      ctx.world,
      { task: c.req.param('id'), note: parsed.data.note ?? null, by: ctx.requester(c) },
      { snapshots: ctx.snapshots, probe: ctx.probe },
    );
    return jsonResponse(result, 201);
  });

  // Changes waiting for a person, each with its diff and gate log: what the dashboard's Reviews page decides on.
  api.get('/reviews', async () => {
    const waiting = await listReviews(ctx.world);
    return jsonResponse({ reviews: await Promise.all(waiting.map((r) => readReview(ctx.world, r.id).catch(() => r))) });
  });

  for (const decision of ['approve', 'reject'] as const) {
    api.post(`/reviews/:id/${decision}`, async (c) => {
      const parsed = reviewBody.safeParse(await c.req.json().catch(() => undefined));
      if (!parsed.success) {
        throw new GenesisError('bad-request', `the body must be {"note": "<optional text, at most ${MAX_REVIEW_NOTE} characters>"}`, {
          hint: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
        });
      }
      const decided = await decideReview(ctx.world, { episode: c.req.param('id'), decision, note: parsed.data.note ?? null, by: ctx.requester(c) });
      return jsonResponse({ decision: decided }, 201);
    });
  }

  api.post('/tasks/:id/reopen', async (c) => {
    const parsed = reopenBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) {
      throw new GenesisError('bad-request', `the body must be {"reason": "<why the work must be done again, at most ${MAX_RETRY_NOTE} characters>"}`, {
        hint: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      });
    }
    if (!ctx.reopen) throw new GenesisError('bad-request', 'this dashboard cannot reopen tasks', { hint: 'use genesis task reopen' });
    const outcome = await ctx.reopen({ task: c.req.param('id'), reason: parsed.data.reason, by: ctx.requester(c) });
    if (!outcome.ok) throw new GenesisError(outcome.error.code as ErrorCode, outcome.error.message, outcome.error.hint ? { hint: outcome.error.hint } : {});
    return jsonResponse(outcome.result, 201);
  });

  api.get('/reliability', async () => {
    const snapshot = await ctx.snapshots.current();
    // The METR-style fit bootstraps; compute once per change of the world, not per poll.
    if (reliability?.stamp !== snapshot.stamp) {
      const done = doneTasksOf(snapshot.history);
      reliability = {
        stamp: snapshot.stamp,
        report: buildReliabilityReport(snapshot.records, snapshot.manifest.tasks, done, snapshot.manifest.retry.maxAttempts),
      };
    }
    return jsonResponse({ ...reliability.report, maxAttempts: snapshot.manifest.retry.maxAttempts, stamp: snapshot.stamp });
  });

  api.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      const seen = await ctx.snapshots.stamp();
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ stamp: seen }) });
      const unsubscribe = ctx.feed.subscribe(
        (stamp) => void stream.writeSSE({ event: 'change', data: JSON.stringify({ stamp }) }).catch(() => undefined),
        seen,
      );
      stream.onAbort(unsubscribe);
      // Comments keep proxies from closing an idle stream; the loop ends when the client leaves.
      while (!stream.aborted && !stream.closed) {
        // An unref'd timer: a stream waiting for its next keep-alive must not keep `genesis serve` alive after it closed.
        await new Promise((resolve) => setTimeout(resolve, ctx.keepAliveMs ?? 15_000).unref());
        if (!stream.aborted) await stream.write(': keep-alive\n\n').catch(() => stream.abort());
      }
      unsubscribe();
    }),
  );

  return api;
}

async function parseBody<T extends z.ZodType>(c: Context, schema: T, shape: string): Promise<z.output<T>> {
  const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) {
    throw new GenesisError('bad-request', `the body must be ${shape}`, {
      hint: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    });
  }
  return parsed.data;
}

// Redis being down must not take the overview with it: the world is still readable.
async function readCluster(list: () => Promise<ClusterWorker[]>): Promise<{ workers: ClusterWorker[]; error: string | null }> {
  try {
    return { workers: await list(), error: null };
  } catch (error) {
    return { workers: [], error: error instanceof Error ? error.message : String(error) };
  }
}

function positiveInt(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new GenesisError('bad-request', `limit must be a positive integer, got "${text}"`);
  return n;
}
