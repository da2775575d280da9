import { z } from 'zod';
import { PRESET_NAMES } from './preset-names.js';
import { CONTROL_CHARACTER } from './path-patterns.js';
import { notifyConfig } from './notify-config.js';

/**
 * The schema of world.yaml. Every field has a description (docs/reference/world-yaml.md is made
 * from them by `npm run docs`, and a test fails on a field without one) and,
 * where it is optional, a default, so the parsed manifest is complete.
 */
const limits = z
  .object({
    cpus: z.number().positive().default(1).describe('CPUs a gate command may use'),
    memoryMb: z.number().int().min(64).default(2048).describe('memory limit of a gate command, MiB'),
    pids: z.number().int().min(16).default(256).describe('process limit of a gate command'),
    diskMb: z
      .number()
      .int()
      .min(16)
      .optional()
      .describe("disk quota of the gate's work dir, MiB (a size-limited tmpfs: counts toward memory; needs root); filling it rejects with disk-quota"),
  })
  .strict();

const goal = z
  .object({
    outcome: z.string().trim().min(1).describe('what the finished world does, in words the agents read'),
    evidence: z
      .string()
      .trim()
      .min(1, 'an empty evidence command would declare the world done at once; remove the field instead')
      .optional()
      .describe('command whose success on the accepted head means the world is done'),
    constraints: z.array(z.string()).default([]).describe('rules every episode is told to keep'),
    progressFile: z.string().optional().describe('a handoff file (e.g. PROGRESS.md) every episode reads and may append to, whatever its task'),
    stop: z
      .object({
        maxEpisodes: z.number().int().positive().optional().describe('no episode starts past this many, counted across runs'),
        maxHours: z.number().positive().optional().describe('stop after this much wall time, counted from the first episode, across restarts'),
        maxCostUsd: z.number().positive().optional().describe('stop once the recorded agent cost reaches this many US dollars'),
        maxTokens: z.number().int().positive().optional().describe('stop once the recorded agent tokens (input + output) reach this many'),
      })
      .strict()
      .default({})
      .describe('budgets: the run stops when one is spent'),
  })
  .strict();

/** A world's dependency set (see src/deps): installed once per key with network, mounted read-only into gates and workspaces. */
const deps = z
  .object({
    files: z
      .array(z.string().trim().min(1))
      .min(1, 'name at least one file that defines the dependencies, e.g. [package.json, package-lock.json]')
      .describe('paths in the tree that define the dependencies (lockfiles); their contents make the key of the prepared set'),
    install: z
      .string()
      .trim()
      .min(1, 'an install command is required, e.g. "npm ci --ignore-scripts"')
      .describe('command that installs the dependencies, run with network in a sandbox that sees only `files`'),
    paths: z
      .array(z.string().trim().min(1))
      .min(1, 'name what the install produces, e.g. [node_modules]')
      .describe('what the install produces, relative to the tree; mounted read-only into every gate and linked into workspaces'),
    timeoutSec: z.number().int().positive().default(900).describe('time for the install'),
    memoryMb: z.number().int().min(256).default(4096).describe('memory limit of the install, MiB'),
  })
  .strict();

const reportPattern = z
  .string()
  .trim()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'a report path is relative to the work dir and stays inside it (no leading "/", no "..")');

const verify = z
  .object({
    sandbox: z
      .enum(['auto', 'docker', 'bwrap', 'none'])
      .default('auto')
      .describe(
        'where gate commands run: auto takes docker when its daemon answers and the image exists, else bubblewrap, else refuses; none runs them as local processes, only when written, with a warning',
      ),
    image: z
      .string()
      .default('genesis/node:20')
      .describe(
        'docker image for gate commands, with its own toolchain (genesis/node:20 carries Node 20, npm and git, no Python; sandboxes/build-images.sh builds it, any other image you pull or build)',
      ),
    setup: z.string().default('').describe('command run first, e.g. "npm ci --offline"'),
    build: z.string().default('').describe('build command, run after setup'),
    test: z.string().trim().min(1, 'a test command is required: a blank one would verify nothing').describe('test command every candidate must pass'),
    timeoutSec: z.number().int().positive().default(600).describe('time for all gate commands of one candidate'),
    limits: limits.default({ cpus: 1, memoryMb: 2048, pids: 256 }).describe('resources of each gate command'),
    mode: z
      .enum(['all-pass', 'ratchet'])
      .default('all-pass')
      .describe('all-pass: every test passes; ratchet: the build passes and the count of passing tests may not fall'),
    holdout: z
      .object({
        dir: z.string().min(1).describe("directory of hidden tests on the orchestrator's side, relative to the world directory or absolute"),
        command: z.string().trim().min(1).describe('command that runs them; they are copied to .genesis-holdout/ in the gate work dir'),
      })
      .strict()
      .optional()
      .describe('acceptance tests the agents never see, run by the gate after the visible ones'),
    report: z
      .object({
        junit: z
          .union([reportPattern, z.array(reportPattern).min(1)])
          .transform((value) => (Array.isArray(value) ? value : [value]))
          .describe('JUnit XML files the test step writes: a path or glob, or a list of them, relative to the work dir (e.g. "reports/*.xml")'),
      })
      .strict()
      .optional()
      .describe("where the test step's report is: counts, the ratchet's score and failing tests are read from it"),
    maxFileKb: z
      .number()
      .int()
      .positive()
      .default(1024)
      .describe('largest new file an episode may write; a file the accepted head holds may grow by this much over its size there'),
    maxChangeKb: z.number().int().positive().default(10240).describe('largest total change of one episode'),
    maxFiles: z.number().int().positive().default(500).describe('most files one episode may change'),
    deps: deps.optional().describe('the dependency set: files that define it, the install command, the paths it produces'),
  })
  .strict();

/**
 * The `sim` calibration agent's draws (see src/agents/sim/sim-agent.ts). Each attempt draws from
 * (seed, task, attempt): a visible error with e, a plausible wrong solution with w, else a right
 * one. The world's false-rejection rate f is not here: it belongs to the world's check, which the
 * gate runs (worlds/sim-chain passes it to checks/steps.sh), not to the agent being judged.
 */
const simAgent = z
  .object({
    e: z.number().min(0).max(1).default(0.1).describe('probability that an attempt exits with an error (a visible error)'),
    w: z.number().min(0).max(1).default(0.05).describe('probability that an attempt writes a plausible wrong solution (a silent error)'),
    d: z.number().min(0).max(1).default(0.8).describe("probability that a wrong solution is of the kind the world's visible check catches"),
    seed: z.number().int().min(0).max(4294967295).default(1).describe('seed of the draws, an integer in [0, 2^32 - 1]'),
    refusals: z
      .array(
        z
          .object({
            kind: z
              .enum(['auth', 'usage-limit', 'overloaded'])
              .describe("the failure class a real agent's CLI reports: refused credentials, a usage or rate limit, an overloaded model"),
            resetSec: z
              .number()
              .int()
              .min(0)
              .optional()
              .describe('for usage-limit: seconds until the limit resets, as the provider says (none: an unknown reset)'),
          })
          .strict(),
      )
      .default([])
      .describe(
        "refusals the model endpoint answers the agent's first episodes with, one per episode in order, before any draw: to exercise how a run meets each failure class",
      ),
  })
  .strict();

const price = z
  .object({
    inputPerMTok: z.number().min(0).describe('US dollars per million input tokens'),
    outputPerMTok: z.number().min(0).describe('US dollars per million output tokens'),
    cachedInputPerMTok: z.number().min(0).optional().describe('US dollars per million cached input tokens; default: the input price'),
  })
  .strict();

/** The fields that choose an agent and its model: all of them in `agent`, any of them in a rotation entry. */
const agentChoice = {
  kind: z
    .enum(['command', 'script', 'sim', 'openai'])
    .describe(
      'command: any CLI agent; script: replays recorded changes; sim: stochastic calibration agent; openai: the built-in agent for any OpenAI-compatible endpoint',
    ),
  preset: z
    .enum(PRESET_NAMES)
    .optional()
    .describe('a known CLI agent for kind command: claude-code, codex, aider, opencode, gemini, copilot (GitHub Copilot CLI) or qwen-code'),
  command: z.array(z.string()).min(1).optional().describe('argv of the agent (kind command); {promptFile} is replaced by the prompt file path'),
  args: z.array(z.string()).optional().describe("arguments appended to a preset's command"),
  script: z.string().optional().describe('recording the script agent replays (kind script), a path in the accepted tree'),
  sim: simAgent.optional().describe('error rates and seed of the calibration agent (kind sim)'),
  model: z
    .string()
    .min(1)
    .optional()
    .describe("the model: required for kind openai; a preset passes it to its CLI's --model (opencode with baseUrl: the model of the provider Genesis writes)"),
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "the model endpoint, in the form the vendor's SDK documents: an OpenAI-compatible root ending in /v1 for kind openai, codex, opencode, copilot and qwen-code (e.g. http://127.0.0.1:8080/v1); Anthropic's root for claude-code (http://127.0.0.1:8080); Gemini's root for gemini. Each preset passes it the way its CLI reads it (a variable, or a provider in a config file in the agent's private HOME), and the agent sandbox lets the agent reach exactly its host and port",
    ),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable')
    .optional()
    .describe('variable holding the API key (kind openai); read by Genesis, never passed to the agent'),
  price: price.optional().describe('prices of the model, overriding the built-in table; used when the agent reports no cost'),
};

const agent = z
  .object({
    ...agentChoice,
    timeoutSec: z.number().int().positive().default(1800).describe("wall time of one episode's agent"),
    limits: z
      .object({
        diskMb: z
          .number()
          .int()
          .min(16)
          .optional()
          .describe(
            "disk quota of the agent's workspace, MiB (a size-limited tmpfs: counts toward memory; needs root); filling it fails the episode with disk-quota",
          ),
        maxCostUsd: z
          .number()
          .positive()
          .optional()
          .describe(
            'the most one episode may report spending, US dollars (default 100); a higher report is flagged usage-implausible and not charged to the budget',
          ),
        maxTokens: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            'the most input + output tokens one episode may report (default 200,000,000); a higher report is flagged usage-implausible and not charged',
          ),
      })
      .strict()
      .default({})
      .describe("limits of the agent's sandbox"),
    env: z
      .array(z.string())
      .default([])
      .describe('names of environment variables passed to the agent (their values are scrubbed from the ledger); a preset adds its own'),
    homeFiles: z
      .array(z.string().regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).+$/, 'a path relative to your HOME, without "..", e.g. ".codex/auth.json"'))
      .default([])
      .describe(
        "files of your HOME the agent gets read-only in its private HOME (a CLI's login or configuration, e.g. .codex/auth.json); nothing else of your HOME is passed",
      ),
    maxTurns: z.number().int().positive().default(50).describe('model calls per episode (kind openai)'),
    maxTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'input + output tokens per episode, measured at the model gateway: the next model call past it is refused and the episode ends agent-token-budget',
      ),
    maxCostUsd: z
      .number()
      .positive()
      .optional()
      .describe(
        "US dollars per episode, measured at the model gateway at the model's price: the next model call past it is refused and the episode ends agent-token-budget",
      ),
    maxTaskTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "input + output tokens one task may spend over all its attempts, measured at the model gateway: past it the gateway refuses the next call and the task's next attempts end agent-token-budget without starting",
      ),
    maxTaskCostUsd: z.number().positive().optional().describe('US dollars one task may spend over all its attempts, likewise'),
    stallSec: z
      .number()
      .int()
      .min(5)
      .max(120)
      .default(120)
      .describe('a model call that sends no byte for this long is ended, and the episode closes model-stalled, uncharged, tried again after a backoff'),
    requestTimeoutSec: z.number().int().positive().default(300).describe('time for one model call (kind openai)'),
    commandTimeoutSec: z.number().int().positive().default(300).describe('time for one run_command (kind openai)'),
    commandOutputKb: z.number().int().positive().default(32).describe('output of one run_command shown to the model, KiB (kind openai)'),
    sandbox: z
      .enum(['auto', 'docker', 'bwrap', 'none'])
      .default('auto')
      .describe(
        "where the agent's processes run: auto (bwrap with a network namespace of its own), bwrap, docker (own container and network), or none (a local process, unconfined: say so only for agents you trust)",
      ),
    image: z
      .string()
      .optional()
      .describe(
        'docker image of the agent sandbox; default: genesis/agent:latest for command agents (Node, git and the pinned agent CLIs: bash sandboxes/build-images.sh --agents), verify.image for the openai agent',
      ),
    network: z
      .union([
        z.string().min(1),
        z
          .object({
            allow: z
              .array(
                z
                  .string()
                  .regex(
                    /^(?:[A-Za-z0-9*](?:[A-Za-z0-9*.-]*[A-Za-z0-9*])?(?::(?:\d{1,5}|\*))?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*|\[[0-9A-Fa-f:.]+\](?::(?:\d{1,5}|\*))?)$/,
                    'a host name or address, optionally with :port (:* for every port; a bare host means ports 80 and 443), with * for any run of characters, e.g. "*.openai.com" or "127.0.0.1:8080"',
                  ),
              )
              .min(1, 'an empty allow-list would cut the agent off from its model; remove agent.network instead')
              .describe(
                'hosts (host, host:port, [IPv6]:port, host:*) the agent may reach through its egress proxy (HTTP CONNECT and plain HTTP); a bare host admits ports 80 and 443; * in a host matches any run of characters',
              ),
            docker: z.string().min(1).optional().describe('docker network of the agent sandbox'),
          })
          .strict(),
        z
          .object({
            mode: z.literal('host').describe("the host's own network: every port of this host's loopback (Redis, the dashboard) and everything it reaches"),
            acknowledge: z
              .string()
              .trim()
              .min(10, 'say in a few words why the agent may reach every service of this host')
              .describe('why the agent gets the host network, in your words; genesis run repeats it in its warning'),
          })
          .strict(),
      ])
      .default('genesis-agents')
      .describe(
        "the docker network of the agent sandbox (a name, created when missing; not host), { allow: [host or host:port] }: an egress allow-list enforced by a proxy (sandbox auto or bwrap), or { mode: host, acknowledge: why }: the host's own network. The model endpoint of agent.baseUrl (host and port) is reachable in every case, on this host's loopback too",
      ),
    promptTemplate: z.string().min(1).optional().describe('the prompt as a template with {{placeholders}}; default: the built-in prompt'),
    rotation: z
      .array(
        z
          .object({ ...agentChoice, env: z.array(z.string()).optional().describe('more variables passed to this agent, besides agent.env') })
          .partial()
          .strict(),
      )
      .default([])
      .describe('agents or models for successive attempts: attempt n uses entry (n-1) mod length, merged over this agent'),
    race: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(1)
      .describe(
        "episodes of every task run at once from the same base (a task's race overrides it): the first to pass its gate wins, or in a ratchet world the highest score",
      ),
  })
  .strict();

export const taskSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit')
      .describe('the task\'s name in commands, the ledger and commit trailers: lowercase letters, digits, ".", "_" and "-"'),
    title: z
      .string()
      .min(1)
      // The title becomes the subject of the accepted commit: a newline or a field separator there would forge its trailers.
      .refine((t) => !CONTROL_CHARACTER.test(t), 'contains a control character (a newline, tab or separator); a title is one line of text')
      .describe('one line saying what the task delivers'),
    kind: z
      .enum(['build', 'planner'])
      .default('build')
      .describe('build: changes the world; planner: proposes new tasks as a file in tasksDir, validated by the gate'),
    description: z.string().default('').describe('what to build, for the agent'),
    acceptance: z.string().default('').describe('how the result is judged, for the agent'),
    paths: z
      .array(z.string())
      .min(1, 'a task needs at least one path it may change, e.g. ["src/add.js"]')
      .describe('files, directories or globs the task may change'),
    dependsOn: z.array(z.string()).default([]).describe('ids of tasks that must be done first (unknown ids and cycles are refused)'),
    check: z.string().optional().describe("the task's acceptance command, run by the gate"),
    humanMinutes: z.number().positive().optional().describe('how long a person would take, in minutes (for the horizon fit of genesis stats)'),
    witness: z.boolean().default(false).describe("fail-to-pass: the task's check must fail on the base commit and pass on the candidate"),
    review: z
      .boolean()
      .default(false)
      .describe('a change that passed its gate waits as awaiting-review until a person approves it (genesis review approve, or the dashboard) before it lands'),
    race: z
      .number()
      .int()
      .min(1)
      .max(16)
      .optional()
      .describe(
        'episodes of this task run at once from the same base (each a different rotation entry); the gate picks the winner, the others are outrun; default: agent.race',
      ),
  })
  .strict();

const publishTarget = z
  .object({
    url: z.string().min(1).describe('a git remote: URL (https, ssh, file) or path; pushed with the credentials git finds for it'),
    ledger: z.boolean().default(false).describe('push the ledger refs (refs/genesis/*) too, so the remote carries the evidence'),
    branch: z
      .string()
      .regex(/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+(?<![./])$/, 'use a git branch name such as "genesis/main"')
      .optional()
      .describe(
        "the remote's branch that receives the accepted branch; given, or in an adopted world (default genesis/<branch>), it is pushed fast-forward only, never forced over the remote's own commits",
      ),
  })
  .strict();

export const manifestSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'use letters, digits, ".", "_" and "-"')
      .describe('the world\'s name: letters, digits, ".", "_" and "-"'),
    branch: z
      .string()
      .regex(/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+(?<![./])$/, 'use a git branch name such as "main"')
      .default('main')
      .describe('the accepted branch'),
    goal: goal.describe('what the world is for, when it is done, and the budgets of a run'),
    verify: verify.describe('how the gate verifies a candidate: sandbox, image, commands, limits, mode'),
    protected: z.array(z.string()).default(['world.yaml']).describe('paths no episode may change; restored from the accepted head before the gate'),
    agent: agent.describe('the agent every episode runs (its kind, program, model, sandbox and limits)'),
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).default(3).describe('episodes per task before it is blocked'),
        blockOnRepeat: z
          .boolean()
          .default(true)
          .describe('block a task early when two attempts in a row fail with the same signature (retrying the same way is waste)'),
      })
      .strict()
      .default({ maxAttempts: 3, blockOnRepeat: true })
      .describe('how often a task is tried before it is blocked'),
    parallelism: z.number().int().min(1).max(64).default(2).describe('episodes running at once'),
    race: z
      .object({
        stopOnWin: z.boolean().default(true).describe('stop the other racers of a race once it is decided (their work so far is kept in the ledger)'),
      })
      .strict()
      .default({ stopOnWin: true })
      .describe("how races (a task's race: N, or agent.race) end"),
    review: z
      .enum(['tasks', 'all'])
      .default('tasks')
      .describe('which changes wait for a person after their gate: tasks (those of tasks with review: true) or all'),
    integration: z
      .object({
        slots: z.number().int().min(1).max(64).optional().describe('speculative verifications running at once; default: parallelism'),
      })
      .strict()
      .optional()
      .describe('the integration queue: changes that passed their own gate, verified on top of those ahead of them'),
    tasks: z.array(taskSchema).default([]).describe('the units of work, each with the paths it may change'),
    tasksDir: z.string().optional().describe('a directory of YAML files ({ tasks: [...] }) whose tasks join those of world.yaml; planner tasks write here'),
    publish: z
      .union([publishTarget, z.array(publishTarget)])
      .transform((v) => (Array.isArray(v) ? v : [v]))
      .optional()
      .describe('remotes that mirror the accepted branch after every accepted change (a forge, say): one { url, ledger } or a list'),
    ledger: z
      .object({
        keepRejectedDays: z
          .number()
          .min(0)
          .default(14)
          .describe('days the changes of episodes that did not land stay in the world; then `genesis prune` drops them, keeping the record and a cut diff'),
      })
      .strict()
      .default({ keepRejectedDays: 14 })
      .describe('how long the ledger keeps what did not land'),
    notify: notifyConfig
      .default({ webhooks: [] })
      .describe('who is told what happens in the world: webhooks (JSON or Slack-compatible), signed, retried, kept across restarts'),
  })
  .strict();

/** world.yaml as the user wrote it. */
export type WorldManifestInput = z.input<typeof manifestSchema>;
/** world.yaml with every default filled in and every cross-field rule checked. */
export type WorldManifest = z.output<typeof manifestSchema>;
export type TaskSpec = z.output<typeof taskSchema>;
/** verify.deps with its defaults filled in. */
export type DepsSpec = z.output<typeof deps>;
