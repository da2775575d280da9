/**
 * The OpenAPI 3.1 document of `genesis serve`'s API, served at /api/openapi.json. Schemas use a
 * small part of JSON Schema (type, with "null" for a nullable field; properties, required, items,
 * enum, anyOf, $ref, additionalProperties): the test validates every listed response against it,
 * and `npm run docs` writes docs/reference/http-api.md from it. A field not listed may be added
 * (objects are open) but a listed one must keep its type.
 */

type Schema = Record<string, unknown>;

const s = (type: string | string[], extra: Schema = {}): Schema => ({ type, ...extra });
const str = s('string');
const int = s('integer');
const num = s('number');
const bool = s('boolean');
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const list = (items: Schema): Schema => s('array', { items });
const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties), description?: string): Schema => ({
  type: 'object',
  properties,
  required,
  ...(description ? { description } : {}),
});
const nullableRef = (name: string): Schema => ({ anyOf: [ref(name), s('null')] });

const OUTCOMES = ['accepted', 'rejected', 'failed', 'abandoned', 'outrun', 'running', 'awaiting-review'];
const TASK_STATES = ['pending', 'running', 'blocked', 'done'];

const schemas: Record<string, Schema> = {
  Error: obj(
    { error: obj({ code: str, message: str, hint: nullable(str) }) },
    ['error'],
    'Every error: a stable code (docs/reference/errors.md), what happened, what to do.',
  ),
  Spend: obj(
    {
      episodes: int,
      tokens: nullable(int),
      episodesWithoutTokens: int,
      costUsd: nullable(num),
      episodesWithoutCost: int,
      agentMs: num,
      gateMs: num,
      toLandingMs: nullable(num),
    },
    ['episodes', 'tokens', 'costUsd', 'agentMs', 'gateMs', 'toLandingMs'],
    'What episodes spent; a sum some episodes reported nothing to is a lower bound (the episodesWithout… counts), one nobody reported is null.',
  ),
  Commit: obj(
    {
      commit: str,
      parents: list(str),
      date: str,
      subject: str,
      episode: nullable(str),
      task: nullable(str),
      attempt: nullable(int),
      agent: nullable(str),
      verified: nullable(str),
      score: nullable(num),
      cost: nullable(num),
      spend: nullableRef('Spend'),
      made: s('string', { enum: ['episode', 'init', 'adopt', 'history', 'reopen', 'amend', 'task-add', 'unattributed'] }),
    },
    ['commit', 'parents', 'date', 'subject', 'episode', 'task', 'attempt', 'agent', 'verified', 'score', 'spend', 'made'],
    'A commit of the accepted branch with its trailers, what made it (an episode, genesis init, amend or task add, or something outside Genesis), its score as the gate that passed it recorded (for a commit gated in the integration queue, from that verification), and what the change took (null for a commit no episode made).',
  ),
  EpisodeRow: obj(
    {
      id: str,
      task: str,
      attempt: int,
      outcome: s('string', { enum: OUTCOMES }),
      reason: nullable(str),
      message: nullable(str),
      signature: nullable(str),
      agent: str,
      worker: str,
      startedAt: str,
      endedAt: nullable(str),
      durationMs: nullable(num),
      gateMs: nullable(num),
      costUsd: nullable(num),
      commit: nullable(str),
      changedFiles: int,
    },
    undefined,
    'One episode, without its logs.',
  ),
  Task: obj(
    {
      id: str,
      title: str,
      state: s('string', { enum: TASK_STATES }),
      dependsOn: list(str),
      paths: list(str),
      humanMinutes: nullable(num),
      failures: int,
      failuresSinceRetry: int,
      attemptsLeft: int,
      lastFailure: nullable(obj({ episode: str, attempt: int, outcome: str, reason: nullable(str), message: nullable(str), signature: nullable(str) })),
      blockedBy: nullable(s('string', { enum: ['attempts', 'repeat', 'broken-base', null] })),
      waitingOn: nullable(str),
      queuedForRetry: nullable(obj({ at: str, note: nullable(str), by: nullable(str) })),
      accepted: nullable(obj({ commit: str, episode: nullable(str), attempt: nullable(int), date: str })),
      reopened: nullable(obj({ commit: str, date: str, reason: nullable(str), by: nullable(str) })),
      running: nullable(obj({ episode: str, attempt: int, startedAt: str, worker: str, liveness: s('string', { enum: ['alive', 'gone', 'unknown'] }) })),
      spend: nullableRef('Spend'),
    },
    undefined,
    'A task of the manifest with its state derived from the ledger, as `genesis run` derives it.',
  ),
  TaskSpec: obj(
    {
      id: str,
      title: str,
      paths: list(str),
      description: str,
      acceptance: str,
      dependsOn: list(str),
      check: str,
      humanMinutes: num,
    },
    ['id', 'title', 'paths'],
    'A new task, as world.yaml holds one (docs/reference/world-yaml.md, tasks[]).',
  ),
  Review: obj(
    {
      id: str,
      task: str,
      attempt: int,
      agent: str,
      base: str,
      candidate: str,
      changedFiles: list(str),
      gate: nullable(str),
      since: nullable(str),
      decided: nullableRef('ReviewDecision'),
      diff: str,
      gateLog: str,
    },
    ['id', 'task', 'attempt', 'agent', 'base', 'candidate', 'changedFiles', 'gate', 'since', 'decided'],
    'A change that passed its gate and waits for a person (a task with review: true), with its diff and gate log.',
  ),
  ReviewDecision: obj(
    { episode: str, decision: s('string', { enum: ['approve', 'reject'] }), note: nullable(str), at: str, by: nullable(str) },
    undefined,
    "A person's decision on a change waiting for review; a rejection's note goes into the next attempt's prompt.",
  ),
  RunStatus: obj({ running: bool, holder: nullable(str) }, undefined, 'Whether a genesis run holds the world, and who.'),
};

const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('Error'), description);
const query = (name: string, schema: Schema, description: string) => ({ name, in: 'query', required: false, schema, description });
const idParam = (description: string) => ({ name: 'id', in: 'path', required: true, schema: str, description });
const body = (schema: Schema) => ({ required: true, content: { 'application/json': { schema } } });
const write = { security: [{ bearer: [] }] };
const refused = {
  '401': error('a token is set and the request did not send it'),
  '403': error('a page of another origin'),
  '415': error('the body is not JSON'),
};

const paths: Record<string, Record<string, Schema>> = {
  '/api/health': {
    get: {
      summary: 'whether the server reads the world; `stamp` changes whenever a ref of the world moves',
      responses: { '200': json(obj({ ok: bool, world: str, name: str, stamp: str, queueBoard: nullable(str) }), 'the world is readable') },
    },
  },
  '/api/overview': {
    get: {
      summary:
        'the status: world, run state and why, task and episode counts, running episodes, workers, budgets, usage, and the hold of the world (a usage limit, a model it waits for) while one holds',
      responses: {
        '200': json(
          obj({
            world: obj({ name: str, path: str, branch: str, head: str, parallelism: int, maxAttempts: int }),
            run: obj({ state: s('string', { enum: ['running', 'done', 'budget', 'blocked', 'stale', 'idle'] }), why: str }),
            tasks: obj({ total: int, pending: int, running: int, blocked: int, done: int, queuedForRetry: int }),
            episodes: obj({ total: int, running: int, accepted: int, rejected: int, failed: int, abandoned: int, outrun: int }),
            running: list(obj({ id: str, task: str, attempt: int, worker: str })),
            budgets: list(obj({ name: str, set: num, lifted: num, limit: num, used: num, unit: str, spent: bool })),
            usage: obj({ costUsd: nullable(num), inputTokens: nullable(num), outputTokens: nullable(num) }),
            hold: nullable(obj({ untilMs: int, message: str })),
            stamp: str,
            cluster: nullable(obj({ workers: list(obj({ id: str, host: str, pid: int })), error: nullable(str) })),
          }),
          'the overview',
        ),
      },
    },
  },
  '/api/run': {
    get: { summary: 'whether a run holds the world', responses: { '200': json(ref('RunStatus'), 'the run, if any') } },
    post: {
      summary: "starts `genesis run` on the world, in the background, as the server's own child process",
      ...write,
      requestBody: body(obj({ pastEvidence: bool }, [])),
      responses: {
        '202': json(obj({ started: bool, pid: int, holder: str, log: str }), 'the run holds the world; `log` is the file its output goes to'),
        '409': error('a run already holds the world (run-in-progress, run-held-elsewhere)'),
        '500': error('the run did not start; the message holds the end of its output'),
        ...refused,
      },
    },
  },
  '/api/run/stop': {
    post: {
      summary: 'stops the run on this machine as Ctrl-C does: episodes in flight are stopped and recorded, the ledger is written',
      ...write,
      requestBody: body(obj({}, [])),
      responses: {
        '202': json(obj({ stopping: str, pid: int }), 'the run was told to stop; GET /api/run says when it has'),
        '409': error('no run holds the world (no-run), or one on another machine does (run-held-elsewhere)'),
        ...refused,
      },
    },
  },
  '/api/history': {
    get: {
      summary: 'the accepted branch, newest first, with the evidence and what each change took',
      parameters: [query('limit', int, 'at most this many commits')],
      responses: {
        '200': json(obj({ branch: str, head: str, total: int, commits: list(ref('Commit')) }), 'the accepted history'),
        '400': error('a bad limit'),
      },
    },
  },
  '/api/episodes': {
    get: {
      summary: 'every episode, newest first, optionally filtered',
      parameters: [
        query('task', str, 'only this task'),
        query('outcome', s('string', { enum: OUTCOMES }), 'only this outcome'),
        query('limit', int, 'at most this many'),
      ],
      responses: {
        '200': json(obj({ total: int, episodes: list(ref('EpisodeRow')), tasks: list(str), outcomes: list(str) }), 'the episodes'),
        '400': error('an unknown outcome or a bad limit'),
      },
    },
  },
  '/api/episodes/{id}': {
    get: {
      summary: 'one episode in full: its ledger record, prompt, agent log, diff, gate log and the reflection it left',
      parameters: [idParam('the episode id')],
      responses: {
        '200': json(
          obj({
            record: obj({
              id: str,
              task: str,
              attempt: int,
              agent: str,
              base: str,
              status: str,
              outcome: nullable(str),
              reason: nullable(str),
              phases: s('object'),
              startedAt: str,
            }),
            task: nullable(obj({ id: str, title: str })),
            artifacts: obj({ prompt: str, agentLog: str, diff: str, gateLog: str }, []),
            reflection: str,
          }),
          'the episode',
        ),
        '404': error('no such episode (episode-not-found)'),
      },
    },
  },
  '/api/timeline': {
    get: {
      summary:
        'the episodes per worker slot of each machine, across restarts of genesis run (episodes that overlap on one machine go to separate slots), each as bars of its phases: agent, gate, waiting, integration; times in ms since the epoch',
      parameters: [query('limit', int, 'the most recently started episodes, at most this many (default 200)')],
      responses: {
        '200': json(
          obj({
            fromMs: nullable(int),
            toMs: nullable(int),
            slots: list(
              obj({
                host: str,
                slot: int,
                episodes: list(
                  obj({
                    id: str,
                    task: str,
                    worker: str,
                    attempt: int,
                    outcome: s('string', { enum: OUTCOMES }),
                    startMs: int,
                    endMs: int,
                    bars: list(obj({ phase: s('string', { enum: ['agent', 'gate', 'waiting', 'integration'] }), startMs: int, endMs: int })),
                  }),
                ),
              }),
            ),
          }),
          'the timeline',
        ),
        '400': error('a bad limit'),
      },
    },
  },
  '/api/integration': {
    get: {
      summary: "the integration queue: each change's stage, its speculative commit and what it is verified on top of; the run's waits",
      responses: {
        '200': json(
          obj({
            run: nullable(str),
            at: nullable(str),
            current: bool,
            head: nullable(str),
            entries: list(obj({ position: int, id: str, task: str, stage: str })),
            counts: s('object'),
            waits: list(obj({ task: str, what: str, ms: int })),
          }),
          'the queue, and what the running scheduler waits on now with how long so far (ms)',
        ),
      },
    },
  },
  '/api/tasks': {
    get: {
      summary: 'the task board: state, failures, last reason and signature, retry marker, what each task spent',
      responses: { '200': json(obj({ maxAttempts: int, counts: s('object'), tasks: list(ref('Task')) }), 'the board') },
    },
    post: {
      summary: 'adds a task to world.yaml on the accepted branch (as `genesis task add`): the new tree passes the gate first',
      ...write,
      requestBody: body(ref('TaskSpec')),
      responses: {
        '201': json(obj({ commit: str, task: str }), 'the commit that added it'),
        '400': error('the task does not validate (manifest-invalid, bad-request)'),
        '409': error('a task with that id exists (task-exists), or a run holds the world (run-in-progress)'),
        ...refused,
      },
    },
  },
  '/api/tasks/{id}/retry': {
    post: {
      summary: 'gives a blocked task a fresh set of attempts (a retry marker in the world)',
      ...write,
      parameters: [idParam('the task id')],
      requestBody: body(obj({ note: nullable(str) }, [])),
      responses: {
        '201': json(
          obj({ retry: obj({ task: str, at: str, note: nullable(str), by: nullable(str), ref: str }), task: ref('Task') }),
          'the marker and the task after it',
        ),
        '404': error('no such task (task-not-found)'),
        '409': error('the task is not blocked (task-not-blocked)'),
        '400': error('a malformed body or a note too long'),
        ...refused,
      },
    },
  },
  '/api/tasks/{id}/reopen': {
    post: {
      summary:
        'makes a done task pending again (as `genesis task reopen`): its work is redone by the next episodes, through a running scheduler when one holds the world',
      ...write,
      parameters: [idParam('the task id')],
      requestBody: body(obj({ reason: str })),
      responses: {
        '201': json(
          obj({ task: str, head: str, commit: str, retry: obj({ task: str, at: str, note: nullable(str), by: nullable(str), ref: str }) }),
          'the commit that reopened it',
        ),
        '400': error('a malformed body, or a task that cannot be reopened'),
        '404': error('no such task (task-not-found)'),
        '409': error('the task is not done'),
        '500': error('the reopening failed'),
        ...refused,
      },
    },
  },
  '/api/reviews': {
    get: {
      summary: 'the changes waiting for a person, oldest first, each with its diff and gate log',
      responses: { '200': json(obj({ reviews: list(ref('Review')) }), 'the reviews') },
    },
  },
  '/api/reviews/{id}/approve': {
    post: {
      summary: 'approves a change waiting for review: it lands through the integration queue (verified again if the head moved)',
      ...write,
      parameters: [idParam('the episode whose change waits')],
      requestBody: body(obj({ note: nullable(str) }, [])),
      responses: {
        '201': json(obj({ decision: ref('ReviewDecision') }), 'the decision, recorded in the world'),
        '404': error('no such episode (episode-not-found)'),
        '409': error('the change does not wait for review (review-not-awaiting), or was decided already (review-decided)'),
        '400': error('a malformed body or a note too long'),
        ...refused,
      },
    },
  },
  '/api/reviews/{id}/reject': {
    post: {
      summary: 'rejects a change waiting for review: the task is tried again with the note in its prompt',
      ...write,
      parameters: [idParam('the episode whose change waits')],
      requestBody: body(obj({ note: nullable(str) }, [])),
      responses: {
        '201': json(obj({ decision: ref('ReviewDecision') }), 'the decision, recorded in the world'),
        '404': error('no such episode (episode-not-found)'),
        '409': error('the change does not wait for review (review-not-awaiting), or was decided already (review-decided)'),
        '400': error('a malformed body or a note too long'),
        ...refused,
      },
    },
  },
  '/api/reliability': {
    get: {
      summary: '`genesis stats` figures and the series the charts draw (a horizon with no failure is the string "Infinity")',
      responses: { '200': json(obj({ stats: s('object'), maxAttempts: int, stamp: str }), 'the report') },
    },
  },
  '/api/events': {
    get: {
      summary: 'server-sent events: `hello`, then `change` with the new stamp whenever the world changes',
      responses: { '200': { description: 'an event stream', content: { 'text/event-stream': { schema: str } } } },
    },
  },
  '/api/openapi.json': {
    get: { summary: 'this document', responses: { '200': json(s('object'), 'the OpenAPI 3.1 document') } },
  },
  '/metrics': {
    get: {
      summary: 'Prometheus metrics in the text format (docs/guides/observability.md lists them)',
      responses: { '200': { description: 'the exposition', content: { 'text/plain': { schema: str } } } },
    },
  },
};

/** The document, as served. */
export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'Genesis',
    version: '1',
    description:
      'The API of `genesis serve`: read a world, steer it, start and stop its run. Reads are open to whoever reaches the server; ' +
      'every request that changes anything needs `Authorization: Bearer $GENESIS_TOKEN` when the server has a token (required when it listens beyond loopback) ' +
      'and a JSON body.',
  },
  components: { schemas, securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'GENESIS_TOKEN' } } },
  paths,
} as const;
