import { reflectionOf } from '../../episode/prompt.js';
import { scoreOf } from '../../world/history/accepted-history.js';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { GenesisError, type ErrorCode } from '../../errors/genesis-error.js';
import { measureChangeCosts } from '../../ledger/change-costs.js';
import { ledgerOf } from '../../ledger/git-ledger.js';
import type { WorldRepo } from '../../world/world-repo.js';
import type { WorldControl } from '../world-control.js';
import type { ChangeFeed } from '../projections/change-feed.js';
import { listEpisodeRows } from '../projections/episode-rows.js';
import { jsonResponse } from '../http/json.js';
import { readIntegrationView } from '../projections/integration-view.js';
import { readWorldHold } from '../../schedule/run/carry-out/world-hold.js';
import { buildOverview } from '../projections/overview.js';
import { buildReliabilityReport, type ReliabilityReport } from '../projections/reliability-report.js';
import { MAX_RETRY_NOTE, retryTask } from '../retry-task.js';
import { decideReview, listReviews, MAX_REVIEW_NOTE, readReview } from '../../operations/review-change.js';
import { doneTasksOf } from '../../world/history/done-tasks.js';
import type { SteeringOutcome } from '../../operations/carry-out-steering.js';
import { buildTaskBoard } from '../projections/task-board.js';
import { buildEpisodeTimeline } from '../projections/episode-timeline.js';
import { withClusterHolders, type ClusterWorker, type LivenessProbe } from '../projections/worker-liveness.js';
import type { WorldSnapshot, WorldSnapshots } from '../projections/world-snapshot.js';

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

import { route, type Route } from './route.js';
import { answers, OUTCOMES, taskSpecSchema } from './schemas.js';

/** What the routes read from, and what they keep between requests. */
export interface ApiState {
  ctx: ApiContext;
  /** The reliability report of the world's last stamp: the METR-style fit bootstraps, so it is made once per change of the world. */
  reliability: { stamp: string; report: ReliabilityReport } | null;
  /** The OpenAPI document made from this table, as served. */
  document: unknown;
}

const limit = (description: string) => ({ limit: { schema: z.number().int().min(1), description } });
const id = (what: string) => ({ id: what });
const noteBody = (max: number) => ({
  schema: z.object({ note: z.string().max(max).nullish() }).strict(),
  says: `{"note": "<optional text, at most ${max} characters>"}`,
});
const decisionErrors = {
  404: 'no such episode (episode-not-found)',
  409: 'the change does not wait for review (review-not-awaiting), or was decided already (review-decided)',
  400: 'a malformed body or a note too long',
};

/** The decision on a change waiting for review, one route each. */
function decisionRoute(decision: 'approve' | 'reject', summary: string): Route<ApiState> {
  return route({
    method: 'post',
    path: `/api/reviews/{id}/${decision}`,
    summary,
    write: true,
    params: id('the episode whose change waits'),
    body: noteBody(MAX_REVIEW_NOTE),
    ok: { status: 201, description: 'the decision, recorded in the world', schema: answers.decided },
    errors: decisionErrors,
    handle: async ({ ctx }, c, body) => {
      const decided = await decideReview(ctx.world, { episode: c.req.param('id')!, decision, note: body.note ?? null, by: ctx.requester(c) });
      return jsonResponse({ decision: decided }, 201);
    },
  });
}

/**
 * Every route of the API, in the order the document lists them: declared once, with the schemas
 * of what each takes and answers (schemas.ts) and what each does.
 */
export const API_ROUTES: Array<Route<ApiState>> = [
  route({
    method: 'get',
    path: '/api/health',
    summary: 'whether the server reads the world; `stamp` changes whenever a ref of the world moves',
    ok: { status: 200, description: 'the world is readable', schema: answers.health },
    handle: async ({ ctx }) => {
      const snapshot = await ctx.snapshots.current();
      return jsonResponse({ ok: true, world: snapshot.path, name: snapshot.manifest.name, stamp: snapshot.stamp, queueBoard: ctx.queueBoardPath() });
    },
  }),
  route({
    method: 'get',
    path: '/api/overview',
    summary:
      'the status: world, run state and why, task and episode counts, running episodes, workers, budgets, usage, and the hold of the world (a usage limit, a model it waits for) while one holds',
    ok: { status: 200, description: 'the overview', schema: answers.overview },
    handle: async ({ ctx }) => {
      const { snapshot, probe, cluster } = await runningView(ctx);
      const overview = buildOverview(snapshot, buildTaskBoard(snapshot, probe), probe, ctx.now());
      // Why no episode starts now (a usage limit, a model the world waits for), as the running scheduler wrote it.
      const hold = await readWorldHold(ctx.world.scratchDir, ctx.now().getTime());
      return jsonResponse({ ...overview, hold, cluster });
    },
  }),
  route({
    method: 'get',
    path: '/api/run',
    summary: 'whether a run holds the world',
    ok: { status: 200, description: 'the run, if any', schema: answers.runStatus },
    handle: async ({ ctx }) => {
      const holder = ctx.control ? await ctx.control.runHolder() : null;
      return jsonResponse({ running: holder !== null, holder });
    },
  }),
  route({
    method: 'post',
    path: '/api/run',
    summary: "starts `genesis run` on the world, in the background, as the server's own child process",
    write: true,
    body: { schema: z.object({ pastEvidence: z.boolean().optional() }).strict(), says: '{"pastEvidence": <optional boolean>}' },
    ok: { status: 202, description: 'the run holds the world; `log` is the file its output goes to', schema: answers.runStarted },
    errors: {
      409: 'a run already holds the world (run-in-progress, run-held-elsewhere)',
      500: 'the run did not start; the message holds the end of its output',
    },
    handle: async ({ ctx }, _c, body) => {
      const started = await control(ctx).startRun({ pastEvidence: body.pastEvidence ?? false });
      return jsonResponse({ started: true, ...started }, 202);
    },
  }),
  route({
    method: 'post',
    path: '/api/run/stop',
    summary: 'stops the run on this machine as Ctrl-C does: episodes in flight are stopped and recorded, the ledger is written',
    write: true,
    body: { schema: z.object({}).strict(), says: '{}' },
    ok: { status: 202, description: 'the run was told to stop; GET /api/run says when it has', schema: answers.runStopping },
    errors: { 409: 'no run holds the world (no-run), or one on another machine does (run-held-elsewhere)' },
    handle: async ({ ctx }) => jsonResponse(await control(ctx).stopRun(), 202),
  }),
  route({
    method: 'get',
    path: '/api/history',
    summary: 'the accepted branch, newest first, with the evidence and what each change took',
    query: limit('at most this many commits'),
    ok: { status: 200, description: 'the accepted history', schema: answers.history },
    errors: { 400: 'a bad limit' },
    handle: async ({ ctx }, c) => {
      const snapshot = await ctx.snapshots.current();
      const limit = positiveInt(c.req.query('limit'));
      const spent = new Map(measureChangeCosts(snapshot.records).changes.map(({ commit, task: _t, episode: _e, attempt: _a, ...rest }) => [commit, rest]));
      // The score the gate recorded: a commit gated in the queue carries none in its trailer, its verification does.
      const commits = await Promise.all(
        snapshot.history.slice(0, limit ?? undefined).map(async (c) => ({ ...c, score: await scoreOf(snapshot.path, c), spend: spent.get(c.commit) ?? null })),
      );
      return jsonResponse({ branch: snapshot.manifest.branch, head: snapshot.head, total: snapshot.history.length, commits });
    },
  }),
  route({
    method: 'get',
    path: '/api/episodes',
    summary: 'every episode, newest first, optionally filtered',
    query: {
      task: { schema: z.string(), description: 'only this task' },
      outcome: { schema: z.enum(OUTCOMES), description: 'only this outcome' },
      ...limit('at most this many'),
    },
    ok: { status: 200, description: 'the episodes', schema: answers.episodes },
    errors: { 400: 'an unknown outcome or a bad limit' },
    handle: async ({ ctx }, c) => {
      const snapshot = await ctx.snapshots.current();
      const outcome = c.req.query('outcome') || undefined;
      if (outcome && !(OUTCOMES as readonly string[]).includes(outcome))
        throw new GenesisError('bad-request', `unknown outcome "${outcome}"`, { hint: `use one of ${OUTCOMES.join(', ')}` });
      const rows = listEpisodeRows(snapshot.records, { task: c.req.query('task') || undefined, outcome });
      const limit = positiveInt(c.req.query('limit'));
      return jsonResponse({
        total: rows.length,
        episodes: rows.slice(0, limit ?? undefined),
        tasks: snapshot.manifest.tasks.map((t) => t.id),
        outcomes: OUTCOMES,
      });
    },
  }),
  route({
    method: 'get',
    path: '/api/episodes/{id}',
    summary: 'one episode in full: its ledger record, prompt, agent log, diff, gate log and the reflection it left',
    params: id('the episode id'),
    ok: { status: 200, description: 'the episode', schema: answers.episode },
    errors: { 404: 'no such episode (episode-not-found)' },
    handle: async ({ ctx }, c) => {
      const id = c.req.param('id')!;
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
    },
  }),
  route({
    method: 'get',
    path: '/api/timeline',
    summary:
      'the episodes per worker slot of each machine, across restarts of genesis run (episodes that overlap on one machine go to separate slots), each as bars of its phases: agent, gate, waiting, integration; times in ms since the epoch',
    query: limit('the most recently started episodes, at most this many (default 200)'),
    ok: { status: 200, description: 'the timeline', schema: answers.timeline },
    errors: { 400: 'a bad limit' },
    handle: async ({ ctx }, c) => {
      const { snapshot } = await runningView(ctx);
      return jsonResponse(buildEpisodeTimeline(snapshot.records, ctx.now(), positiveInt(c.req.query('limit')) ?? undefined));
    },
  }),
  route({
    method: 'get',
    path: '/api/integration',
    summary: "the integration queue: each change's stage, its speculative commit and what it is verified on top of; the run's waits",
    ok: { status: 200, description: 'the queue, and what the running scheduler waits on now with how long so far (ms)', schema: answers.integration },
    handle: async ({ ctx }) => jsonResponse(await readIntegrationView(ctx.world)),
  }),
  route({
    method: 'get',
    path: '/api/tasks',
    summary: 'the task board: state, failures, last reason and signature, retry marker, what each task spent',
    ok: { status: 200, description: 'the board', schema: answers.tasks },
    handle: async ({ ctx }) => {
      const { snapshot, probe } = await runningView(ctx);
      return jsonResponse(buildTaskBoard(snapshot, probe));
    },
  }),
  route({
    method: 'post',
    path: '/api/tasks',
    summary: 'adds a task to world.yaml on the accepted branch (as `genesis task add`): the new tree passes the gate first',
    write: true,
    body: { schema: taskSpecSchema, says: '{"id", "title", "paths": [...], and any other field of a task in world.yaml}' },
    ok: { status: 201, description: 'the commit that added it', schema: answers.taskAdded },
    errors: {
      400: 'the task does not validate (manifest-invalid, bad-request)',
      409: 'a task with that id exists (task-exists), or a run holds the world (run-in-progress)',
    },
    handle: async ({ ctx }, _c, spec) => {
      const commit = await control(ctx).addTask(spec);
      return jsonResponse({ commit, task: spec.id }, 201);
    },
  }),
  route({
    method: 'post',
    path: '/api/tasks/{id}/retry',
    summary: 'gives a blocked task a fresh set of attempts (a retry marker in the world)',
    write: true,
    params: id('the task id'),
    body: noteBody(MAX_RETRY_NOTE),
    ok: { status: 201, description: 'the marker and the task after it', schema: answers.retried },
    errors: { 404: 'no such task (task-not-found)', 409: 'the task is not blocked (task-not-blocked)', 400: 'a malformed body or a note too long' },
    handle: async ({ ctx }, c, body) => {
      const result = await retryTask(
        ctx.world,
        { task: c.req.param('id')!, note: body.note ?? null, by: ctx.requester(c) },
        { snapshots: ctx.snapshots, probe: ctx.probe },
      );
      return jsonResponse(result, 201);
    },
  }),
  route({
    method: 'post',
    path: '/api/tasks/{id}/reopen',
    summary:
      'makes a done task pending again (as `genesis task reopen`): its work is redone by the next episodes, through a running scheduler when one holds the world',
    write: true,
    params: id('the task id'),
    body: {
      schema: z.object({ reason: z.string().min(1).max(MAX_RETRY_NOTE) }).strict(),
      says: `{"reason": "<why the work must be done again, at most ${MAX_RETRY_NOTE} characters>"}`,
    },
    ok: { status: 201, description: 'the commit that reopened it', schema: answers.reopened },
    errors: {
      400: 'a malformed body, or a task that cannot be reopened',
      404: 'no such task (task-not-found)',
      409: 'the task is not done',
      500: 'the reopening failed',
    },
    handle: async ({ ctx }, c, body) => {
      if (!ctx.reopen) throw new GenesisError('bad-request', 'this dashboard cannot reopen tasks', { hint: 'use genesis task reopen' });
      const outcome = await ctx.reopen({ task: c.req.param('id')!, reason: body.reason, by: ctx.requester(c) });
      if (!outcome.ok) throw new GenesisError(outcome.error.code as ErrorCode, outcome.error.message, outcome.error.hint ? { hint: outcome.error.hint } : {});
      return jsonResponse(outcome.result, 201);
    },
  }),
  route({
    method: 'get',
    path: '/api/reviews',
    summary: 'the changes waiting for a person, oldest first, each with its diff and gate log',
    ok: { status: 200, description: 'the reviews', schema: answers.reviews },
    // Each with its diff and gate log: what the dashboard's Reviews page decides on.
    handle: async ({ ctx }) => {
      const waiting = await listReviews(ctx.world);
      return jsonResponse({ reviews: await Promise.all(waiting.map((r) => readReview(ctx.world, r.id).catch(() => r))) });
    },
  }),
  decisionRoute('approve', 'approves a change waiting for review: it lands through the integration queue (verified again if the head moved)'),
  decisionRoute('reject', 'rejects a change waiting for review: the task is tried again with the note in its prompt'),
  route({
    method: 'get',
    path: '/api/reliability',
    summary: '`genesis stats` figures and the series the charts draw (a horizon with no failure is the string "Infinity")',
    ok: { status: 200, description: 'the report', schema: answers.reliability },
    handle: async (state) => {
      const snapshot = await state.ctx.snapshots.current();
      if (state.reliability?.stamp !== snapshot.stamp) {
        const done = doneTasksOf(snapshot.history);
        state.reliability = {
          stamp: snapshot.stamp,
          report: buildReliabilityReport(snapshot.records, snapshot.manifest.tasks, done, snapshot.manifest.retry.maxAttempts),
        };
      }
      return jsonResponse({ ...state.reliability.report, maxAttempts: snapshot.manifest.retry.maxAttempts, stamp: snapshot.stamp });
    },
  }),
  route({
    method: 'get',
    path: '/api/events',
    summary: 'server-sent events: `hello`, then `change` with the new stamp whenever the world changes',
    ok: { status: 200, description: 'an event stream', media: 'text/event-stream' },
    handle: ({ ctx }, c) =>
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
  }),
  route({
    method: 'get',
    path: '/api/openapi.json',
    summary: 'this document',
    ok: { status: 200, description: 'the OpenAPI 3.1 document', schema: answers.openapi },
    handle: ({ document }) => jsonResponse(document),
  }),
  // Served by the app beside the API (create-app.ts); listed here so the document describes it.
  route({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics in the text format (docs/guides/observability.md lists them)',
    ok: { status: 200, description: 'the exposition', media: 'text/plain' },
  }),
];

function control(ctx: ApiContext): WorldControl {
  if (!ctx.control) throw new GenesisError('not-available', 'this server was started without control of the run', { hint: 'use genesis serve' });
  return ctx.control;
}

/** The running view, with each episode named after the worker that holds it when Redis says who does. */
async function runningView(
  ctx: ApiContext,
): Promise<{ snapshot: WorldSnapshot; probe: LivenessProbe; cluster: Awaited<ReturnType<typeof readCluster>> | null }> {
  const snapshot = await ctx.snapshots.current();
  if (!ctx.listWorkers) return { snapshot, probe: ctx.probe, cluster: null };
  const cluster = await readCluster(ctx.listWorkers);
  const held = withClusterHolders(snapshot.records, cluster.workers, ctx.probe);
  return { snapshot: { ...snapshot, records: held.records }, probe: held.probe, cluster };
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
