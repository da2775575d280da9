import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { GenesisError } from '../../errors/genesis-error.js';
import type { Agent, AgentRunInput, AgentRunResult } from '../agent.js';
import type { AgentSandbox } from '../../sandbox/agent-sandbox.js';
import { resolveOnPath } from '../../sandbox/agent/find-binary.js';
import { dockerRunFailure } from '../../sandbox/agent/docker/docker-agent-sandbox.js';
import { NoneAgentSandbox } from '../../sandbox/agent/none-agent-sandbox.js';
import { createProcessTracker, type ProcessTracker } from '../../sandbox/agent/process-tracker.js';
import { isUnknownUsage, withCost, type ModelPrice } from '../usage/usage.js';
import { OutputTail } from '../../sandbox/gate/output-tail.js';
import type { AgentEndpoint } from '../../sandbox/egress/endpoints.js';
import { probeEndpoints, watchEndpoints } from './endpoint-probe.js';
import { authFailedError, episodeFailureOf, type AgentFailureClass as CliFailure } from '../failure-classes.js';
import type { PresetLaunch, UsageReader } from './presets/preset.js';
import { constants } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import type { ChannelFailure } from '../../channel/episode-channel.js';
import { agentModelUrl, hostCredentials, type ModelRoute } from '../model-route.js';
import { beforeLaunch, channelResult } from '../channel-result.js';

const KILL_GRACE_MS = 2_000;

/** The agent's HOME as it runs, and the files of it its preset reads after it exits (a usage report). */
interface AgentFiles {
  home: string;
  outputFiles: readonly string[];
}
/** How long output may still arrive after the agent exited (a daemon may hold the pipe open forever). */
const OUTPUT_GRACE_MS = 500;

export interface CommandAgentOptions {
  /** How the ledger names the agent. @default `command:<argv joined by spaces>` */
  label?: string;
  /** Reads token usage and cost from the agent's stdout (a preset's reader). */
  usageReader?: () => UsageReader;
  /** Variables passed through when set, on top of those the episode allows (a preset's credentials). */
  passEnv?: readonly string[];
  /** Where the agent runs. @default a local process (NoneAgentSandbox) */
  sandbox?: AgentSandbox;
  /** Prices the tokens when the agent reports no cost of its own. */
  price?: ModelPrice | null;
  /** How to install the binary, for the message when it is missing. */
  install?: string;
  /** Disk quota of the workspace, HOME and /tmp in MiB (`agent.limits.diskMb`; sandboxed agents only). */
  diskMb?: number;
  /** Files of the host's HOME passed read-only into the agent's private HOME (`agent.homeFiles`). */
  homeFiles?: readonly string[];
  /** The model endpoints of `agent.baseUrl`, probed before each launch (agent-unreachable-model). */
  endpoints?: readonly AgentEndpoint[];
  /** A preset's fixed variables and the files it writes into the agent's private HOME (then the agent runs with that HOME, even unconfined). */
  launch?: PresetLaunch;
  /**
   * The agent's road to its model through the gateway; with it, `launchFor` gives the preset's
   * variables and files for the URL the agent is given (which names the episode's own listener).
   */
  route?: ModelRoute;
  launchFor?: (modelUrl: string) => PresetLaunch;
}

/**
 * Runs any CLI agent as a child process. The process gets its own process group so that the
 * whole tree (the agent and whatever it spawned) can be killed at the timeout and at the end.
 * With an agent sandbox the child is the sandbox's launcher (bwrap, docker run), and the sandbox
 * cleans up after it.
 */
export class CommandAgent implements Agent {
  readonly label: string;
  private readonly sandbox: AgentSandbox;

  constructor(
    private readonly argv: readonly string[],
    private readonly options: CommandAgentOptions = {},
  ) {
    this.label = options.label ?? `command:${argv.join(' ')}`;
    this.sandbox = options.sandbox ?? new NoneAgentSandbox();
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const argv = this.argv.map((arg) => expandHome(arg.replaceAll('{promptFile}', input.promptFile)));
    const env = { ...input.env };
    for (const name of this.options.passEnv ?? []) {
      const value = process.env[name];
      if (value !== undefined && env[name] === undefined) env[name] = value;
    }
    // Found before anything starts: inside a sandbox a missing binary is only an exit code.
    if (this.sandbox.hostBinaries && (await resolveOnPath(argv[0]!, env.PATH, input.workspace)) === null) throw this.notFound(argv[0]!);
    const route = this.options.route;
    if (!route) {
      Object.assign(env, this.options.launch?.env);
      // A model that is not there fails now, not at the agent's timeout after its CLI retried all along.
      await probeEndpoints(this.options.endpoints ?? []);
      return this.runWith(argv, env, this.options.launch, input, null);
    }
    const before = await beforeLaunch(route, input.spendable);
    if (before) return { exitCode: 0, timedOut: false, aborted: false, log: `${before.message}\n`, durationMs: 0, failure: before };
    const failures: ChannelFailure[] = [];
    const ending = new AbortController();
    const host = (await this.sandbox.modelHost?.()) ?? '127.0.0.1';
    const opened = await route.gateway.open(
      {
        label: this.label,
        upstream: route.upstream,
        credentials: hostCredentials(route),
        stallMs: route.stallMs,
        ...(route.maxTokens === undefined ? {} : { maxTokens: route.maxTokens }),
        ...(route.maxCostUsd === undefined ? {} : { maxCostUsd: route.maxCostUsd }),
        ...(input.spendable?.tokens === undefined ? {} : { worldTokens: input.spendable.tokens }),
        ...(input.spendable?.costUsd === undefined ? {} : { worldCostUsd: input.spendable.costUsd }),
        ...(input.spendable?.taskTokens === undefined ? {} : { taskTokens: input.spendable.taskTokens }),
        ...(input.spendable?.taskCostUsd === undefined ? {} : { taskCostUsd: input.spendable.taskCostUsd }),
        priceOf: route.priceOf,
        onFailure: (failure) => {
          failures.push(failure);
          ending.abort();
        },
      },
      host,
    );
    try {
      const url = agentModelUrl(route, opened.port, host);
      // No real key enters the sandbox: each credential variable holds the episode's stand-in.
      for (const name of Object.keys(route.credentials)) delete env[name];
      Object.assign(env, opened.env, { GENESIS_MODEL_URL: url });
      const launch = this.options.launchFor?.(url);
      Object.assign(env, launch?.env);
      const signal = input.signal ? AbortSignal.any([input.signal, ending.signal]) : ending.signal;
      const ran = await this.runWith(argv, env, launch, { ...input, signal }, opened.port);
      opened.close();
      return channelResult(ran, opened.channel.report(), failures[0] ?? null, route, this.options.price ?? null, this.label);
    } finally {
      opened.close();
    }
  }

  private async runWith(
    argv: string[],
    env: Record<string, string>,
    preset: PresetLaunch | undefined,
    input: AgentRunInput,
    modelPort: number | null,
  ): Promise<AgentRunResult> {
    const privateHome = join(dirname(input.promptFile), 'home');
    const written = await writeHomeFiles(privateHome, preset?.homeFiles ?? {});
    const home = this.sandbox.kind === 'none' && !written ? (env.HOME ?? privateHome) : privateHome;
    const launch = await this.sandbox.launch(argv, {
      workspace: input.workspace,
      home,
      env,
      readOnly: [input.promptFile, ...(input.readOnly ?? [])],
      name: `${env.GENESIS_EPISODE_ID ?? 'run'}-${randomBytes(3).toString('hex')}`,
      ...(this.options.diskMb === undefined ? {} : { diskMb: this.options.diskMb }),
      ...(this.options.homeFiles ? { homeFiles: this.options.homeFiles } : {}),
      ...(modelPort === null ? {} : { modelPort }),
    });
    // The model going away mid-episode ends it too: the bridge counts refused connects, a probe confirms.
    const watch = new AbortController();
    const relay = () => watch.abort();
    input.signal?.addEventListener('abort', relay, { once: true });
    if (input.signal?.aborted) watch.abort();
    let gone: GenesisError | null = null;
    const stopWatching =
      launch.endpointFailures && modelPort === null
        ? watchEndpoints(launch.endpointFailures, this.options.endpoints ?? [], (error) => {
            gone = error;
            watch.abort();
          })
        : () => undefined;
    try {
      const ran = await this.runLaunched(launch, argv[0]!, { home, outputFiles: preset?.outputFiles ?? [] }, { ...input, signal: watch.signal });
      if (gone) throw gone;
      const result = launch.egressRefused ? { ...ran, egressRefused: launch.egressRefused() } : ran;
      // A full disk says more than the exit code it caused (ENOSPC, or a hang until the timeout).
      if (!result.aborted && (await launch.diskFull?.())) {
        return { ...result, failure: { reason: 'disk-quota', message: `the agent filled its disk quota (agent.limits.diskMb: ${this.options.diskMb} MiB)` } };
      }
      return result;
    } finally {
      stopWatching();
      input.signal?.removeEventListener('abort', relay);
      await launch.dispose();
    }
  }

  private notFound(program: string): GenesisError {
    const install = this.options.install ? ` (${this.options.install})` : '';
    return new GenesisError('agent-not-found', `the agent command "${program}" was not found${this.options.label ? ` (agent ${this.options.label})` : ''}`, {
      hint: `install it${install} or fix agent.command in world.yaml; retrying cannot help`,
    });
  }

  private async runLaunched(
    launch: { file: string; args: string[]; env: Record<string, string> },
    program: string,
    files: AgentFiles,
    input: AgentRunInput,
  ): Promise<AgentRunResult> {
    const started = Date.now();
    const log = new OutputTail(1024 * 1024);
    const usage = this.options.usageReader?.();
    // A sandbox cleans up after its launcher; a local process is tracked, setsid daemons included.
    const tracker = this.sandbox.kind === 'none' ? await createProcessTracker() : null;
    const [file, ...args] = tracker ? tracker.wrap([launch.file, ...launch.args]) : [launch.file, ...launch.args];
    try {
      return await this.runTracked(file!, args, launch.env, tracker, started, log, usage, program, files, input);
    } finally {
      await tracker?.dispose();
    }
  }

  private async runTracked(
    file: string,
    args: string[],
    env: Record<string, string>,
    tracker: ProcessTracker | null,
    started: number,
    log: OutputTail,
    usage: UsageReader | undefined,
    program: string,
    files: AgentFiles,
    input: AgentRunInput,
  ): Promise<AgentRunResult> {
    const child = execa(file, args, {
      cwd: input.workspace,
      env: { ...env, ...tracker?.env },
      extendEnv: false,
      input: input.prompt,
      detached: true,
      reject: false,
      all: true,
      buffer: false,
      stdin: 'pipe',
    });
    child.all?.on('data', (chunk: Buffer) => log.push(chunk));
    const errors = new OutputTail(8 * 1024);
    child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk));
    let timedOut = false;
    let aborted = false;
    let failure: CliFailure | null = null;
    // A CLI that retries refused credentials or a usage limit by itself would burn its whole time: stopped as soon as its output says so.
    const watch = () => {
      if (failure || !usage?.failure) return;
      failure = usage.failure();
      if (failure) stop('failure');
    };
    // stdout alone for usage: stderr chunks could fall in the middle of a usage line; stderr has its own reader.
    if (usage) {
      child.stdout?.on('data', (chunk: Buffer) => {
        usage.push(chunk.toString('utf8'));
        watch();
      });
      if (usage.pushError) {
        child.stderr?.on('data', (chunk: Buffer) => {
          usage.pushError?.(chunk.toString('utf8'));
          watch();
        });
      }
    }
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      }
    };
    const stop = (why: 'timeout' | 'abort' | 'failure') => {
      if (why === 'timeout') timedOut = true;
      else if (why === 'abort') aborted = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    // Daemons the agent left behind must not outlive it, nor keep the episode waiting on its output.
    child.once('exit', () => {
      killGroup('SIGKILL');
      void tracker?.killAll();
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.all?.destroy();
      }, OUTPUT_GRACE_MS).unref();
    });
    const timer = setTimeout(() => stop('timeout'), input.timeoutMs);
    const onAbort = () => stop('abort');
    input.signal?.addEventListener('abort', onAbort, { once: true });
    // An abort while the sandbox was being prepared fired before anyone listened.
    if (input.signal?.aborted) onAbort();
    const result = await child;
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
    if (result.failed && result.exitCode === undefined && !timedOut && !aborted && result.code === 'ENOENT') throw this.notFound(program);
    const exitCode = result.exitCode ?? (timedOut || aborted ? 137 : 1);
    const sandboxFailure = this.sandbox.kind === 'docker' && !timedOut && !aborted ? dockerRunFailure(exitCode, log.text().slice(-4000), program) : null;
    if (sandboxFailure) throw sandboxFailure;
    if (usage?.pushFile) await feedOutputFiles(usage, files.home, files.outputFiles);
    const reported = usage ? withCost(usage.usage(), this.options.price ?? null) : null;
    const found: CliFailure | null = aborted ? null : (failure ?? (timedOut || exitCode === 0 ? null : (usage?.failure?.() ?? null)));
    if (found?.kind === 'auth') throw authFailedError(this.label, found.message);
    return {
      exitCode,
      timedOut,
      aborted,
      log:
        (log.truncated ? `[${log.totalBytes - log.capacity} earlier bytes not kept]\n` : '') +
        log.text() +
        (result.code === 'ENOENT' ? `\n${result.shortMessage}\n` : ''),
      durationMs: Date.now() - started,
      ...(reported && !isUnknownUsage(reported) ? { usage: reported } : {}),
      ...(lastLines(errors.text()) ? { stderrTail: lastLines(errors.text()) } : {}),
      ...(found ? { failure: episodeFailureOf(found) } : {}),
    };
  }
}

/**
 * `~` and `~/…` as a shell would expand them, to this user's home: an argv runs without a shell, so
 * `bash ~/agents/my-agent.sh` would otherwise name a file called `~`.
 */
function expandHome(arg: string): string {
  if (arg === '~') return homedir();
  return arg.startsWith('~/') ? join(homedir(), arg.slice(2)) : arg;
}

/** The last few non-empty lines of an output, trimmed and bounded, on one line. */
export function lastLines(text: string, count = 3, maxChars = 400): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const joined = lines.slice(-count).join(' | ');
  return joined.length > maxChars ? `…${joined.slice(-maxChars)}` : joined;
}

/** The most of an output file a reader is given: a usage report is a few KiB, and the agent could write anything there. */
const OUTPUT_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Feeds the reader each output file the CLI left in its HOME; one it did not write (killed, refused)
 * is skipped. Read by this process, outside the sandbox, from a HOME the agent could write: only a
 * regular file is read, never one the agent replaced by a symlink to a host file or by a FIFO.
 */
async function feedOutputFiles(usage: UsageReader, home: string, files: readonly string[]): Promise<void> {
  for (const path of files) {
    const handle = await open(join(home, path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
    if (!handle) continue;
    try {
      if (!(await handle.stat()).isFile()) continue;
      const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(OUTPUT_FILE_MAX_BYTES), position: 0 });
      usage.pushFile?.(path, buffer.subarray(0, bytesRead).toString('utf8'));
    } finally {
      await handle.close();
    }
  }
}

/** Writes a preset's files into the private HOME; whether there were any. */
async function writeHomeFiles(home: string, files: Readonly<Record<string, string>>): Promise<boolean> {
  const entries = Object.entries(files);
  for (const [path, content] of entries) {
    const target = join(home, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  return entries.length > 0;
}
