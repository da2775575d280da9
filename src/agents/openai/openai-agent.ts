import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import type { Agent, AgentRunInput, AgentRunResult } from '../agent.js';
import type { AgentSandbox } from '../../sandbox/agent-sandbox.js';
import type { AgentEndpoint } from '../../sandbox/egress/endpoints.js';
import type { ModelRoute } from '../model-route.js';
import { CommandAgent } from '../command/command-agent.js';
import { isUnknownUsage, withCost, type ModelPrice } from '../usage/usage.js';
import { agentProgram } from './agent-program.js';
import { PROGRAM_ENV, RESULT_FILE, TRANSCRIPT_FILE, type ProgramResult } from './program/program-result.js';
import { readLeftFile, readProgramResult, TRANSCRIPT_BYTES } from './read-program-result.js';

export { SYSTEM_PROMPT } from './program/tool-loop.js';

export interface OpenAIAgentOptions {
  /** API root of an OpenAI-compatible server, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** Variable of Genesis's environment holding the API key; the program gets it as OPENAI_API_KEY, its commands never. */
  apiKeyEnv?: string;
  /** Model calls per episode. */
  maxTurns: number;
  /** Input + output tokens per episode; unlimited when unset. */
  maxTokens?: number;
  requestTimeoutMs: number;
  /** Time limit of one `run_command`. */
  commandTimeoutMs: number;
  /** Output of one `run_command` kept for the model (the tail). */
  commandOutputBytes: number;
  price: ModelPrice | null;
  /** Where the program runs, with its commands. */
  sandbox: AgentSandbox;
  /** The model endpoint of `baseUrl`, probed before each launch, as for a command agent (the sandbox opens the way to it). */
  endpoints?: readonly AgentEndpoint[];
  /** Disk quota in MiB of the workspace, HOME and /tmp (`agent.limits.diskMb`; sandboxed only). */
  diskMb?: number;
  /** How the ledger names the agent. @default `openai:<model>` */
  label?: string;
  /** Retries of one model call (429, 5xx, dropped connection). @default 5 */
  maxRetries?: number;
  /** The longest rate-limit wait honoured. @default 60000 */
  maxRetryWaitMs?: number;
  /** The road to the model through the gateway; without it, the program calls baseUrl with the key itself. */
  route?: ModelRoute;
}

/** Where in the private HOME the program leaves its outcome and transcript. */
const RESULT_DIR = '.genesis-openai';

/**
 * The built-in agent: a tool-calling loop against any OpenAI-compatible Chat Completions endpoint
 * (hosted, vLLM, llama.cpp's server, Ollama), run as a program like any other agent. It is
 * launched once per episode by a CommandAgent (same sandbox, same reach to its model, same
 * process-group kill and timeout as a CLI agent), and its file, search and command tools run
 * inside that sandbox, never in Genesis's process. Genesis reads what it left after it exited:
 * its outcome (usage, why it failed) and its transcript, bounded, as regular files only.
 */
export class OpenAIAgent implements Agent {
  readonly label: string;

  constructor(private readonly options: OpenAIAgentOptions) {
    this.label = options.label ?? `openai:${options.model}`;
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const o = this.options;
    const apiKey = o.apiKeyEnv ? process.env[o.apiKeyEnv] : undefined;
    if (o.apiKeyEnv && !apiKey) {
      throw new GenesisError('agent-credentials-missing', `agent.apiKeyEnv names ${o.apiKeyEnv}, which is not set`, {
        hint: `export ${o.apiKeyEnv} where Genesis runs (each worker needs it)`,
      });
    }
    const program = await agentProgram();
    const resultDir = join(dirname(input.promptFile), 'home', RESULT_DIR);
    // Whatever a file there says, it is not this run's.
    await rm(resultDir, { recursive: true, force: true });
    const env: Record<string, string> = {
      ...input.env,
      [PROGRAM_ENV.baseUrl]: o.baseUrl,
      [PROGRAM_ENV.model]: o.model,
      [PROGRAM_ENV.maxTurns]: String(o.maxTurns),
      [PROGRAM_ENV.requestTimeoutMs]: String(o.requestTimeoutMs),
      [PROGRAM_ENV.commandTimeoutMs]: String(o.commandTimeoutMs),
      [PROGRAM_ENV.commandOutputBytes]: String(o.commandOutputBytes),
      [PROGRAM_ENV.resultDir]: resultDir,
      ...(o.maxTokens === undefined ? {} : { [PROGRAM_ENV.maxTokens]: String(o.maxTokens) }),
      ...(o.maxRetries === undefined ? {} : { [PROGRAM_ENV.maxRetries]: String(o.maxRetries) }),
      ...(o.maxRetryWaitMs === undefined ? {} : { [PROGRAM_ENV.maxRetryWaitMs]: String(o.maxRetryWaitMs) }),
      ...(apiKey ? { [PROGRAM_ENV.apiKey]: apiKey } : {}),
    };
    // An image with programs of its own brings its own node; otherwise the one running Genesis.
    const node = o.sandbox.kind === 'docker' && !o.sandbox.hostBinaries ? 'node' : process.execPath;
    const launcher = new CommandAgent([node, ...program.args], {
      label: this.label,
      sandbox: o.sandbox,
      // Through the model gateway, the program is given the gateway's URL and a stand-in for its key, as a CLI is.
      ...(o.route ? { route: o.route, launchFor: (url: string) => ({ env: { [PROGRAM_ENV.baseUrl]: url }, homeFiles: {} }), price: o.price } : {}),
      ...(o.endpoints && o.endpoints.length > 0 ? { endpoints: o.endpoints } : {}),
      ...(o.diskMb === undefined ? {} : { diskMb: o.diskMb }),
    });
    const ran = await launcher.run({ ...input, env, readOnly: [...(input.readOnly ?? []), ...program.readOnly] });
    const stopped = ran.timedOut || ran.aborted;
    // Believed only from a program that ended as it says it did: a command that wrote a forged outcome and then killed the program is not the program speaking.
    const exited = ({ 0: 'finished', 1: 'failed', 143: 'stopped' } as const)[ran.exitCode as 0 | 1 | 143] ?? null;
    const written = exited ? await readProgramResult(join(resultDir, RESULT_FILE)) : null;
    const result = written?.outcome === exited ? written : null;
    if (result?.fatal && !stopped) throw fatalError(result.fatal);
    const transcript = await readTranscript(join(resultDir, TRANSCRIPT_FILE));
    const reported = result ? withCost({ ...result.usage, costUsd: null }, o.price) : null;
    // Measured at the gateway when the program went through it; the program's own count is then a cross-check.
    const wire = ran.usageSource === 'wire';
    const usage = wire ? (ran.usage ?? null) : reported;
    // What the gateway saw (a usage limit, a stall, a spent budget) says more than what the program made of it.
    const failure = ran.failure ?? (stopped ? undefined : result?.failure);
    const cost = usage ? `cost ${usage.costUsd === null ? 'unknown' : `$${usage.costUsd}`}\n` : '';
    const missing = result || stopped ? '' : `the agent's program left no outcome (exit code ${ran.exitCode})\n`;
    return {
      ...ran,
      exitCode: stopped ? 137 : ran.exitCode,
      log: `${ran.log}${ran.log === '' || ran.log.endsWith('\n') ? '' : '\n'}${cost}${missing}`,
      ...(transcript === null ? {} : { transcript }),
      ...(usage && !isUnknownUsage(usage) ? { usage } : {}),
      ...(wire && reported && !isUnknownUsage(reported) ? { reportedUsage: reported } : {}),
      ...(failure ? { failure } : {}),
    };
  }
}

/** What the program said ended the run for a person to fix, with Genesis's own hint (the message is the program's, bounded by its schema). */
function fatalError(fatal: NonNullable<ProgramResult['fatal']>): GenesisError {
  const hints: Record<typeof fatal.code, string> = {
    'agent-auth-failed': 'check agent.apiKeyEnv and the variable it names',
    'agent-model-not-found': 'check agent.baseUrl (it usually ends in /v1) and agent.model',
    'agent-quota-exhausted': 'add credit or raise the quota; retrying cannot help',
    'agent-endpoint-unreachable': 'check agent.baseUrl and that the model server is running and reachable from the agent sandbox',
  };
  return new GenesisError(fatal.code, fatal.message, { hint: hints[fatal.code] });
}

/** The transcript the program left, when it is a whole JSON document within bounds. */
async function readTranscript(path: string): Promise<string | null> {
  const text = await readLeftFile(path, TRANSCRIPT_BYTES);
  if (text === null) return null;
  try {
    JSON.parse(text);
    return text;
  } catch {
    return null;
  }
}
