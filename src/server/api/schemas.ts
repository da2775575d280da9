import { z } from 'zod';

/**
 * The schemas of the API's bodies: what a route takes and what it answers, in zod, from which the
 * OpenAPI document is generated (openapi-document.ts). Answers are open objects (a field not listed
 * may be added, a listed one keeps its type); request bodies are strict where the route refuses
 * what it does not know. A schema named with `component` is a component of the document.
 */
export const components: Array<{ schema: z.ZodType; id: string; description: string }> = [];

/** Names `schema` as a component of the document, with what it is. */
function component<T extends z.ZodType>(id: string, description: string, schema: T): T {
  components.push({ schema, id, description });
  return schema;
}

const str = z.string();
const int = z.number().int();
const num = z.number();
const bool = z.boolean();
const obj = z.looseObject;
/** An object whose fields the document leaves open (counts by state, statistics); a new one each use, so none becomes a shared reference. */
const anyObject = () => z.looseObject({});

export const OUTCOMES = ['accepted', 'rejected', 'failed', 'abandoned', 'outrun', 'running', 'awaiting-review'] as const;
const TASK_STATES = ['pending', 'running', 'blocked', 'done'] as const;
const outcome = z.enum(OUTCOMES);

component(
  'Error',
  'Every error: a stable code (docs/reference/errors.md), what happened, what to do.',
  obj({ error: obj({ code: str, message: str, hint: str.nullable() }) }),
);

const spend = component(
  'Spend',
  'What episodes spent; a sum some episodes reported nothing to is a lower bound (the episodesWithout… counts), one nobody reported is null.',
  obj({
    episodes: int,
    tokens: int.nullable(),
    episodesWithoutTokens: int.optional(),
    costUsd: num.nullable(),
    episodesWithoutCost: int.optional(),
    agentMs: num,
    gateMs: num,
    toLandingMs: num.nullable(),
  }),
);

const commit = component(
  'Commit',
  'A commit of the accepted branch with its trailers, what made it (an episode, genesis init, amend or task add, or something outside Genesis), its score as the gate that passed it recorded (for a commit gated in the integration queue, from that verification), and what the change took (null for a commit no episode made).',
  obj({
    commit: str,
    parents: z.array(str),
    date: str,
    subject: str,
    episode: str.nullable(),
    task: str.nullable(),
    attempt: int.nullable(),
    agent: str.nullable(),
    verified: str.nullable(),
    score: num.nullable(),
    cost: num.nullable().optional(),
    spend: spend.nullable(),
    made: z.enum(['episode', 'init', 'adopt', 'history', 'reopen', 'amend', 'task-add', 'unattributed']),
  }),
);

const episodeRow = component(
  'EpisodeRow',
  'One episode, without its logs.',
  obj({
    id: str,
    task: str,
    attempt: int,
    outcome,
    reason: str.nullable(),
    message: str.nullable(),
    signature: str.nullable(),
    agent: str,
    worker: str,
    startedAt: str,
    endedAt: str.nullable(),
    durationMs: num.nullable(),
    gateMs: num.nullable(),
    costUsd: num.nullable(),
    commit: str.nullable(),
    changedFiles: int,
  }),
);

const retryMarker = obj({ task: str, at: str, note: str.nullable(), by: str.nullable(), ref: str });

const task = component(
  'Task',
  'A task of the manifest with its state derived from the ledger, as `genesis run` derives it.',
  obj({
    id: str,
    title: str,
    state: z.enum(TASK_STATES),
    dependsOn: z.array(str),
    paths: z.array(str),
    humanMinutes: num.nullable(),
    failures: int,
    failuresSinceRetry: int,
    attemptsLeft: int,
    lastFailure: obj({ episode: str, attempt: int, outcome: str, reason: str.nullable(), message: str.nullable(), signature: str.nullable() }).nullable(),
    blockedBy: z.enum(['attempts', 'repeat', 'broken-base']).nullable(),
    waitingOn: str.nullable(),
    queuedForRetry: obj({ at: str, note: str.nullable(), by: str.nullable() }).nullable(),
    accepted: obj({ commit: str, episode: str.nullable(), attempt: int.nullable(), date: str }).nullable(),
    reopened: obj({ commit: str, date: str, reason: str.nullable(), by: str.nullable() }).nullable(),
    running: obj({ episode: str, attempt: int, startedAt: str, worker: str, liveness: z.enum(['alive', 'gone', 'unknown']) }).nullable(),
    spend: spend.nullable(),
  }),
);

/** The shape only: world.yaml's own schema judges the task when it is added. */
export const taskSpecSchema = component(
  'TaskSpec',
  'A new task, as world.yaml holds one (docs/reference/world-yaml.md, tasks[]).',
  obj({
    id: str.min(1),
    title: str.min(1),
    paths: z.array(str).min(1),
    description: str.optional(),
    acceptance: str.optional(),
    dependsOn: z.array(str).optional(),
    check: str.optional(),
    humanMinutes: num.optional(),
  }),
);

const reviewDecision = component(
  'ReviewDecision',
  "A person's decision on a change waiting for review; a rejection's note goes into the next attempt's prompt.",
  obj({ episode: str, decision: z.enum(['approve', 'reject']), note: str.nullable(), at: str, by: str.nullable() }),
);

const review = component(
  'Review',
  'A change that passed its gate and waits for a person (a task with review: true), with its diff and gate log.',
  obj({
    id: str,
    task: str,
    attempt: int,
    agent: str,
    base: str,
    candidate: str,
    changedFiles: z.array(str),
    gate: str.nullable(),
    since: str.nullable(),
    decided: reviewDecision.nullable(),
    diff: str.optional(),
    gateLog: str.optional(),
  }),
);

const runStatus = component('RunStatus', 'Whether a genesis run holds the world, and who.', obj({ running: bool, holder: str.nullable() }));

/** What each route answers with 2xx, by the route's name in the table (routes.ts). */
export const answers = {
  health: obj({ ok: bool, world: str, name: str, stamp: str, queueBoard: str.nullable() }),
  overview: obj({
    world: obj({ name: str, path: str, branch: str, head: str, parallelism: int, maxAttempts: int }),
    run: obj({ state: z.enum(['running', 'done', 'budget', 'blocked', 'stale', 'idle']), why: str }),
    tasks: obj({ total: int, pending: int, running: int, blocked: int, done: int, queuedForRetry: int }),
    episodes: obj({ total: int, running: int, accepted: int, rejected: int, failed: int, abandoned: int, outrun: int }),
    running: z.array(obj({ id: str, task: str, attempt: int, worker: str })),
    budgets: z.array(obj({ name: str, set: num, lifted: num, limit: num, used: num, unit: str, spent: bool })),
    usage: obj({ costUsd: num.nullable(), inputTokens: num.nullable(), outputTokens: num.nullable() }),
    hold: obj({ untilMs: int, message: str }).nullable(),
    stamp: str,
    cluster: obj({ workers: z.array(obj({ id: str, host: str, pid: int })), error: str.nullable() }).nullable(),
  }),
  runStatus,
  runStarted: obj({ started: bool, pid: int, holder: str, log: str }),
  runStopping: obj({ stopping: str, pid: int }),
  history: obj({ branch: str, head: str, total: int, commits: z.array(commit) }),
  episodes: obj({ total: int, episodes: z.array(episodeRow), tasks: z.array(str), outcomes: z.array(str) }),
  episode: obj({
    record: obj({
      id: str,
      task: str,
      attempt: int,
      agent: str,
      base: str,
      status: str,
      outcome: str.nullable(),
      reason: str.nullable(),
      phases: anyObject(),
      startedAt: str,
    }),
    task: obj({ id: str, title: str }).nullable(),
    artifacts: obj({ prompt: str.optional(), agentLog: str.optional(), diff: str.optional(), gateLog: str.optional() }),
    reflection: str,
  }),
  timeline: obj({
    fromMs: int.nullable(),
    toMs: int.nullable(),
    slots: z.array(
      obj({
        host: str,
        slot: int,
        episodes: z.array(
          obj({
            id: str,
            task: str,
            worker: str,
            attempt: int,
            outcome,
            startMs: int,
            endMs: int,
            bars: z.array(obj({ phase: z.enum(['agent', 'gate', 'waiting', 'integration']), startMs: int, endMs: int })),
          }),
        ),
      }),
    ),
  }),
  integration: obj({
    run: str.nullable(),
    at: str.nullable(),
    current: bool,
    head: str.nullable(),
    entries: z.array(obj({ position: int, id: str, task: str, stage: str })),
    counts: anyObject(),
    waits: z.array(obj({ task: str, what: str, ms: int })),
  }),
  tasks: obj({ maxAttempts: int, counts: anyObject(), tasks: z.array(task) }),
  taskAdded: obj({ commit: str, task: str }),
  retried: obj({ retry: retryMarker, task }),
  reopened: obj({ task: str, head: str, commit: str, retry: retryMarker }),
  reviews: obj({ reviews: z.array(review) }),
  decided: obj({ decision: reviewDecision }),
  reliability: obj({ stats: anyObject(), maxAttempts: int, stamp: str }),
  openapi: anyObject(),
};
