import type { AgentUsage } from './usage/usage.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

/**
 * The Agent port: one fresh attempt at one task, in one workspace.
 *
 * Contract:
 * - The agent sees only its workspace (its working directory), its prompt (a file and stdin) and
 *   the environment it is given; nothing of an earlier episode survives except what is in the
 *   world or the prompt.
 * - Whatever it leaves changed in the workspace, committed or not, is its candidate; the agent
 *   never decides whether its change lands.
 * - `run` resolves for every way the agent can end (exit code, timeout, abort); it rejects only
 *   when the agent cannot be started at all, with a GenesisError whose `retryable` says whether
 *   another episode could do better (a missing binary cannot).
 * - At the end, nothing the agent started is left running.
 */
export interface AgentRunInput {
  workspace: string;
  promptFile: string;
  prompt: string;
  /** GENESIS_* variables plus those the manifest allows. */
  env: Record<string, string>;
  /** Host paths a sandboxed agent sees read-only besides its workspace: the dependency sets its workspace links to. @default [] */
  readOnly?: readonly string[];
  timeoutMs: number;
  /** What is left of the world's budgets: an agent whose model calls are measured stops calling past it. */
  spendable?: { tokens?: number; costUsd?: number; taskTokens?: number; taskCostUsd?: number };
  taskId: string;
  attempt: number;
  signal?: AbortSignal;
}

export interface AgentRunResult {
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  /** Combined stdout and stderr (the tail, if long). */
  log: string;
  durationMs: number;
  /** Tokens and cost: measured at the model gateway (`usageSource: wire`), else as the agent reported them; absent when nothing is known. */
  usage?: AgentUsage;
  /** Where `usage` comes from: the gateway's reading of every model call, or the agent's own report. @default 'agent' */
  usageSource?: 'wire' | 'agent';
  /** The agent's own report of its usage, when the gateway measured it: kept as a cross-check. */
  reportedUsage?: AgentUsage;
  /** Model calls the gateway forwarded. */
  modelCalls?: number;
  /** The conversation with the model (JSON), for agents that hold one (the `openai` adapter). */
  transcript?: string;
  /** Why the agent gave up, when it can say better than an exit code (a context-length error). */
  failure?: {
    reason: RejectionReason;
    message: string;
    /** A usage or rate limit: no episode of the world starts before this time (ms since the epoch). */
    holdUntil?: number;
  };
  /** Requests its egress proxy refused, for an agent with an allow-list (`agent.network.allow`). */
  egressRefused?: number;
  /** The last lines the agent wrote to stderr (a few, trimmed): its own word on why it stopped. */
  stderrTail?: string;
}

export interface Agent {
  /** How the ledger and the Genesis-Agent trailer name this agent. */
  readonly label: string;
  run(input: AgentRunInput): Promise<AgentRunResult>;
}
