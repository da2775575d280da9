import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { initWorld } from '../../../src/operations/init-world.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { installAgentCli } from '../../helpers/agent-clis.js';
import { agentImageBuilt } from '../../helpers/agent-image.js';
import { type CliProcess, startCli } from '../../helpers/cli-process.js';
import { fastClusterEnv } from '../../helpers/distributed-world.js';
import { type ScriptedCall, startToolScriptServer } from '../../helpers/model-servers/chat-tool-script.js';
import { bwrapAnswers, dockerAnswers } from '../../helpers/services.js';
import { CLI_SERVERS, KEY_ENV } from '../../integration/agents/command/conformance/cli-world.js';
import { attackRoot, BASE_FILES } from './adversarial-world.js';

/**
 * The cells of the attack matrix: every agent kind Genesis launches or replays, in each sandbox.
 * A cheating agent is one shell script (run by the `command` agent, and by each preset's path,
 * which reads its output as that CLI's) or one recording (replayed by the `script` agent); the
 * `openai` agent's cells, which need a scripted model, are in openai-agent-attacks. The presets'
 * own cells run their vendors' real CLIs (see {@link cliCheater}).
 */
export type AgentKind = 'command' | 'preset' | 'script';
export const AGENT_KINDS: readonly AgentKind[] = ['command', 'preset', 'script'];
export type SandboxKind = 'bwrap' | 'docker';
export const SANDBOXES: readonly SandboxKind[] = ['bwrap', 'docker'];

/** Whether the sandbox answers here (a describe's set-up skips its worlds when it does not; its tests then fail or skip as itWith says). */
export function sandboxAnswers(sandbox: SandboxKind): boolean {
  return sandbox === 'docker' ? dockerAnswers() : bwrapAnswers();
}

/**
 * The presets whose CLI is pinned here, each with a cell of its own path and of its real CLI
 * (Aider, a Python program, has neither: no PyPI here).
 */
export type CliPreset = 'claude-code' | 'codex' | 'gemini' | 'opencode' | 'copilot' | 'qwen-code';
export const CLI_PRESETS: readonly CliPreset[] = ['claude-code', 'codex', 'gemini', 'opencode', 'copilot', 'qwen-code'];

export function isCliPreset(kind: string): kind is CliPreset {
  return (CLI_PRESETS as readonly string[]).includes(kind);
}

/**
 * The model each preset's path names without `agent.baseUrl`, one its preset routes to the
 * vendor's endpoint through the gateway (opencode routes only a model of a provider it names).
 */
const VENDOR_MODELS: Readonly<Record<CliPreset, string>> = {
  'claude-code': 'claude-sonnet-4-5',
  codex: 'gpt-5-codex',
  gemini: 'gemini-2.5-pro',
  opencode: 'openai/gpt-5',
  copilot: 'gpt-5',
  'qwen-code': 'qwen3-coder-plus',
};

const CHEATER = ['sh', '.genesis/agent.sh'];

/**
 * The manifest's `agent` of a cell: the cheater confined by the cell's sandbox. The `preset` kind
 * is one race of an episode per preset (a rotation entry each: the same script under that preset's
 * variables, HOME files, key stand-ins and reader), so one world holds every preset's path; see
 * {@link cellManifest} for the rest of its settings, and {@link racerOf} for each racer's episode.
 */
export function agentOf(kind: AgentKind, sandbox: SandboxKind): Record<string, unknown> {
  const confined = { timeoutSec: 60, sandbox, ...(sandbox === 'docker' ? { image: 'genesis/node:20' } : {}) };
  if (kind === 'script') return { kind: 'script', script: '.genesis/recording.yaml', ...confined };
  if (kind === 'preset') {
    const rotation = CLI_PRESETS.map((preset) => ({ preset, command: CHEATER, model: VENDOR_MODELS[preset] }));
    return { kind: 'command', ...rotation[0], ...confined, rotation, race: rotation.length };
  }
  return { kind: 'command', command: CHEATER, ...confined };
}

/**
 * A cell's manifest: `agentOf`'s agent over `manifest`, and for the `preset` kind what its race of
 * every preset needs: each racer runs to its gate (a win stops none), each is an attempt of its
 * own, and every task's racers run at once.
 */
export function cellManifest(kind: AgentKind, sandbox: SandboxKind, manifest: Record<string, unknown>): Record<string, unknown> {
  const agent = agentOf(kind, sandbox);
  if (kind !== 'preset') return { ...manifest, agent };
  const tasks = (manifest.tasks as unknown[]).length;
  return {
    ...manifest,
    agent,
    race: { stopOnWin: false },
    retry: { maxAttempts: CLI_PRESETS.length, blockOnRepeat: false },
    parallelism: CLI_PRESETS.length * tasks,
  };
}

/** The episode of `task` that ran `preset`'s path in a `preset` cell's race (its agent's label starts with the preset's name). */
export function racerOf<T extends { task: string; agent: string; outcome: string | null }>(episodes: readonly T[], task: string, preset: CliPreset): T {
  const found = episodes.filter((e) => e.task === task && e.outcome !== 'abandoned' && e.agent.split(':')[0] === preset);
  expect(found, `the racers of ${task} under ${preset}: ${episodes.map((e) => `${e.agent} ${e.outcome}`).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

/**
 * The world's files that make the cheater of every kind: its shell script and its recording (one
 * step per task: files to write, a line to say).
 */
export function cheaterFiles(script: string, recording: Record<string, { say?: string; write: Record<string, string> }>): Record<string, string> {
  return {
    '.genesis/agent.sh': script,
    '.genesis/recording.yaml': stringify({ tasks: Object.fromEntries(Object.entries(recording).map(([task, step]) => [task, [step]])) }),
  };
}

/**
 * The models a `preset` cell's racers name by `agent.baseUrl` where Genesis runs as `genesis run`
 * or a `genesis worker`: those check, before an agent starts, that its model endpoint accepts
 * connections, and without a baseUrl that is the vendor's, which this machine does not reach. A
 * scripted server of each vendor's API on this host stands in (the cheater never calls it), with
 * the key each preset passes through the model gateway.
 */
export async function presetModels(agent: Record<string, unknown>): Promise<ScriptedCheater> {
  const servers = await Promise.all(CLI_SERVERS.map(async (s) => ({ ...s, server: await s.start() })));
  const modelOf = (preset: CliPreset) => {
    const { server, root, model } = servers.find((s) => s.cli === preset)!;
    return { baseUrl: `${server.origin}${root}`, model };
  };
  const rotation = (agent.rotation as Array<{ preset: CliPreset }>).map((entry) => ({ ...entry, ...modelOf(entry.preset) }));
  return {
    agent: { ...agent, ...modelOf(agent.preset as CliPreset), rotation },
    env: Object.fromEntries(CLI_PRESETS.map((preset) => [KEY_ENV[preset], 'sk-scripted-attack-key'])),
    close: async () => {
      await Promise.all(servers.map((s) => s.server.close()));
    },
  };
}

/** A cheater driven by a scripted model: its manifest's `agent`, the environment Genesis needs to launch it, and its model to close. */
export interface ScriptedCheater {
  agent: Record<string, unknown>;
  /** For a preset's CLI: PATH with its bin directory first, and the key the preset passes (the gateway swaps a stand-in for it). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The `openai` cheater of a cell: the built-in agent, confined by `sandbox`, whose scripted model
 * makes `calls`; by default it runs the shell cheater (`.genesis/agent.sh`) through run_command.
 */
export async function openaiCheater(
  sandbox: SandboxKind,
  calls: readonly ScriptedCall[] = [{ name: 'run_command', args: { command: 'sh .genesis/agent.sh' } }],
): Promise<ScriptedCheater> {
  const model = await startToolScriptServer(calls);
  return { agent: { kind: 'openai', model: 'scripted', baseUrl: model.baseUrl, timeoutSec: 60, sandbox }, env: {}, close: () => model.close() };
}

/**
 * The cheater of a cell as `cli`: installed once in the shared cache (bubblewrap runs it from
 * there; docker runs the agent image's copy, the same pinned version), its scripted model running
 * the shell cheater (or `command`) through the CLI's shell tool, then saying `say` (by default a
 * plain "done"), which the CLI prints as its result.
 */
export async function cliCheater(cli: CliPreset, opts: { command?: string; say?: string; sandbox?: SandboxKind } = {}): Promise<ScriptedCheater> {
  const { start, root, model } = CLI_SERVERS.find((s) => s.cli === cli)!;
  const installed = await installAgentCli(cli);
  // Under docker the CLI is the agent image's copy.
  if (opts.sandbox === 'docker') await agentImageBuilt();
  const server = await start();
  server.command = opts.command ?? 'sh .genesis/agent.sh';
  if (opts.say !== undefined) server.say = opts.say;
  return {
    agent: { kind: 'command', preset: cli, baseUrl: `${server.origin}${root}`, model, timeoutSec: 120, sandbox: opts.sandbox ?? 'bwrap' },
    env: { PATH: `${installed.binDir}:${process.env.PATH}`, [KEY_ENV[cli]]: 'sk-scripted-attack-key' },
    close: () => server.close(),
  };
}

/**
 * A preset's real CLI cheating in a fleet whose agents and gates docker confines (the CLI is the
 * agent image's copy, at the same pinned version): one cell that is a docker cell and a fleet cell
 * at once, for the classes that depend on how a sandbox is configured. `run` gets the cheater,
 * whose environment (the key the preset passes) goes to the fleet's processes, not this one's,
 * so the cells of every CLI can run at the same time; its model is closed after.
 */
/**
 * The CLIs with cells in a docker fleet: those whose fleet fits the suite's time (a few seconds
 * each, at once); Gemini CLI, opencode, Copilot CLI and Qwen Code take minutes together there.
 */
export const DOCKER_FLEET_CLIS: readonly CliPreset[] = ['claude-code', 'codex'];

export async function inDockerFleet<T>(cli: CliPreset, run: (cheater: ScriptedCheater) => Promise<T>, opts: { say?: string } = {}): Promise<T> {
  const cheater = await cliCheater(cli, { ...opts, sandbox: 'docker' });
  try {
    return await run(cheater);
  } finally {
    await cheater.close();
  }
}

/** Runs `run` with `env` set in this process (Genesis launches agents from its own environment), restored after. */
export async function withEnv<T>(env: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await run();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const REDIS = 'redis://127.0.0.1:6379';

/** The fleet's cells of a class: every kind, under each sandbox. */
export const FLEET_CELLS: ReadonlyArray<{ kind: AgentKind; sandbox: SandboxKind }> = SANDBOXES.flatMap((sandbox) =>
  AGENT_KINDS.map((kind) => ({ kind, sandbox })),
);

/**
 * The fleets of one class's fleet cells: each agent kind and sandbox runs once, in a root of its
 * own, when a test first asks for it (a `preset` cell's one fleet runs every preset's racers, and
 * its six tests read it); `dispose` removes every root.
 */
export function fleetCells<T>(run: (root: string, kind: AgentKind, sandbox: SandboxKind) => Promise<T>): {
  of(kind: AgentKind, sandbox: SandboxKind): Promise<T>;
  dispose(): Promise<void>;
} {
  const roots: string[] = [];
  const fleets = new Map<string, Promise<T>>();
  return {
    of(kind, sandbox) {
      const key = `${kind} ${sandbox}`;
      let fleet = fleets.get(key);
      if (!fleet) {
        fleet = attackRoot().then(({ root }) => {
          roots.push(root);
          return run(root, kind, sandbox);
        });
        fleets.set(key, fleet);
      }
      return fleet;
    },
    async dispose() {
      await Promise.allSettled(fleets.values());
      for (const root of roots) await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * A cell's world run as a fleet runs it: created under `root` (as runAttackedWorld creates one),
 * then `genesis run --redis` schedules and one `genesis worker` runs every episode and gate.
 * Resolves with the world's path, the run's exit code once the run ended by itself, and what the
 * scheduler and the worker printed. `extraEnv` is both processes' environment beyond this one's;
 * a `preset` cell's racers with no `agent.baseUrl` are given {@link presetModels}'.
 */
export async function runInFleet(
  root: string,
  world: { manifest: Record<string, unknown>; files: Record<string, string> },
  sandbox: SandboxKind,
  extraEnv: Record<string, string> = {},
): Promise<{ worldPath: string; exitCode: number | null; printed: string }> {
  const agent = world.manifest.agent as Record<string, unknown>;
  const preset = agent.rotation && !agent.baseUrl ? await presetModels(agent) : null;
  const manifest = preset ? { ...world.manifest, agent: { ...agent, ...preset.agent } } : world.manifest;
  const source = join(root, 'source');
  for (const [path, content] of Object.entries({ ...BASE_FILES, ...world.files, 'world.yaml': stringify(manifest) })) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const gates = await createSandbox(sandbox, { image: 'genesis/node:20' });
  const { world: made } = await initWorld({ worldPath: join(root, 'w.world'), from: source, sandbox: async () => gates });
  // A job's lock of 10 s: a worker that the whole suite on two cores starves for a few seconds
  // keeps its job (the two seconds of the crash tests would hand it on and run it twice), while a
  // worker an attack froze still loses it, and the cell sees the job run again.
  const env = { ...fastClusterEnv(), GENESIS_LOCK_MS: '10000', GENESIS_STALLED_MS: '5000', ...preset?.env, ...extraEnv };
  const started: CliProcess[] = [];
  try {
    // A preset cell's racers run at once on the worker, as they do in one process.
    const concurrency = preset ? CLI_PRESETS.length : 1;
    const worker = startCli(['worker', '--redis', REDIS, '--json', '--concurrency', String(concurrency)], env);
    started.push(worker);
    await worker.waitFor(/"type":"ready"/);
    const scheduler = startCli(['run', '--world', made.path, '--redis', REDIS, '--json'], env);
    started.push(scheduler);
    // The episodes run on the worker, not in the scheduler's process.
    await worker.waitFor(/"type":"start"/, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\nthe scheduler printed:\n${scheduler.lines.join('\n')}\n${scheduler.stderr()}`);
    });
    const exitCode = await Promise.race([scheduler.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 120_000))]);
    expect(exitCode, 'genesis run --redis did not end').not.toBe('timeout');
    const printed = started.map((p) => `${p.lines.join('\n')}\n${p.stderr()}`).join('\n');
    return { worldPath: made.path, exitCode: exitCode as number | null, printed };
  } finally {
    for (const p of started) p.child.kill('SIGTERM');
    await preset?.close();
  }
}
