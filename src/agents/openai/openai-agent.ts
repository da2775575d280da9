import { dirname, join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import type { Agent, AgentRunInput, AgentRunResult } from '../agent.js';
import type { AgentSandbox } from '../../sandbox/agent-sandbox.js';
import { addUsage, isUnknownUsage, withCost, zeroUsage, type AgentUsage, type ModelPrice } from '../usage/usage.js';
import { ChatClient, type ChatOutcome } from './chat/client.js';
import type { ChatUsage, ToolCall } from './chat/wire.js';
import { runCommand } from './run-command-tool.js';
import { callTool, TOOL_SPECS, type ToolContext } from './tools.js';
import { brief, Transcript, type TurnRecord } from './transcript.js';
import type { RejectionReason } from '../../errors/rejection-reasons.js';

export interface OpenAIAgentOptions {
  /** API root of an OpenAI-compatible server, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** Variable holding the API key, read by Genesis only (never passed to the agent's commands). */
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
  /** Where `run_command` runs. */
  sandbox: AgentSandbox;
  /** How the ledger names the agent. @default `openai:<model>` */
  label?: string;
  /** Retries of one model call (429, 5xx, dropped connection). @default 5 */
  maxRetries?: number;
  /** The longest rate-limit wait honoured. @default 60000 */
  maxRetryWaitMs?: number;
}

export const SYSTEM_PROMPT =
  'You are a coding agent working in a git repository, the workspace, through tools: list_files, read_file, search, ' +
  'write_file, edit_file, run_command and finish. Paths are relative to the workspace root. Make the change the task ' +
  'asks for, run its tests with run_command, and call finish with a short summary when you are done. Only the files ' +
  'you leave changed count; nothing you say is read by the gate that verifies them.';

/**
 * The built-in agent: a tool-calling loop against any OpenAI-compatible Chat Completions endpoint
 * (hosted, vLLM, llama.cpp's server, Ollama). Each turn sends the conversation with the tool
 * specs, carries out the tool calls the model answers with, and sends their results back, until
 * the model calls `finish` (or answers without a tool call), or a budget is spent: turns, tokens,
 * wall time (the episode's timeout).
 */
export class OpenAIAgent implements Agent {
  readonly label: string;

  constructor(private readonly options: OpenAIAgentOptions) {
    this.label = options.label ?? `openai:${options.model}`;
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    const o = this.options;
    const started = Date.now();
    const apiKey = o.apiKeyEnv ? process.env[o.apiKeyEnv] : undefined;
    if (o.apiKeyEnv && !apiKey) {
      throw new GenesisError('agent-credentials-missing', `agent.apiKeyEnv names ${o.apiKeyEnv}, which is not set`, {
        hint: `export ${o.apiKeyEnv} where Genesis runs (each worker needs it)`,
      });
    }
    const deadline = AbortSignal.timeout(input.timeoutMs);
    const signal = input.signal ? AbortSignal.any([deadline, input.signal]) : deadline;
    const client = new ChatClient({
      baseUrl: o.baseUrl,
      apiKey,
      requestTimeoutMs: o.requestTimeoutMs,
      maxRetries: o.maxRetries,
      maxRetryWaitMs: o.maxRetryWaitMs,
    });
    const transcript = new Transcript({ model: o.model, baseUrl: o.baseUrl }, [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: input.prompt },
    ]);
    const home = join(dirname(input.promptFile), 'home');
    const tools: ToolContext = {
      workspace: input.workspace,
      runCommand: (command, timeoutSec) =>
        runCommand(command, {
          sandbox: o.sandbox,
          workspace: input.workspace,
          home,
          env: input.env,
          signal,
          timeoutMs: Math.min(o.commandTimeoutMs, (timeoutSec ?? Infinity) * 1000),
          maxOutputBytes: o.commandOutputBytes,
          name: input.env.GENESIS_EPISODE_ID ?? 'openai',
          readOnly: input.readOnly,
        }),
    };
    const state: LoopState = { usage: zeroUsage(), finished: null };
    try {
      await this.converse(client, transcript, tools, signal, state);
    } catch (error) {
      // A stopped run or a spent wall time ends the conversation wherever it was.
      if (!signal.aborted) throw error;
    }
    const timedOut = deadline.aborted && !input.signal?.aborted;
    const aborted = Boolean(input.signal?.aborted);
    const failure = timedOut || aborted ? undefined : state.failure;
    if (timedOut) transcript.finish('timed out', `after ${Math.round((Date.now() - started) / 1000)}s`);
    else if (aborted) transcript.finish('aborted', 'the run was stopped');
    else if (failure) transcript.finish('failed', `${failure.reason}: ${failure.message}`);
    else transcript.finish('finished', state.finished ?? '');
    const usage = withCost({ ...state.usage, costUsd: null }, o.price);
    transcript.say(summaryLine(transcript, usage));
    return {
      exitCode: timedOut || aborted ? 137 : failure ? 1 : 0,
      timedOut,
      aborted,
      log: transcript.log(),
      durationMs: Date.now() - started,
      transcript: transcript.toJSON(),
      ...(isUnknownUsage(usage) ? {} : { usage }),
      ...(failure ? { failure } : {}),
    };
  }

  /** Turns until the model finishes, a budget is spent or the endpoint fails; the outcome goes into `state`. */
  private async converse(client: ChatClient, transcript: Transcript, tools: ToolContext, signal: AbortSignal, state: LoopState): Promise<void> {
    const o = this.options;
    for (let turn = 1; turn <= o.maxTurns; turn++) {
      const t0 = Date.now();
      const outcome = await client.complete({ model: o.model, messages: transcript.messages, tools: TOOL_SPECS, tool_choice: 'auto' }, signal);
      if (outcome.kind !== 'ok') {
        state.failure = failureOf(outcome, turn);
        return;
      }
      const choice = outcome.response.choices[0]!;
      state.usage = addUsage(state.usage, usageOf(outcome.response.usage));
      // Some local servers leave ids out; the tool results must still name the call they answer.
      const calls = (choice.message.tool_calls ?? []).map((call, i): ToolCall => ({ ...call, id: call.id || `call_${turn}_${i}`, type: 'function' }));
      transcript.messages.push({ role: 'assistant', content: choice.message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      const record: TurnRecord = {
        turn,
        durationMs: 0,
        waitedMs: outcome.waitedMs,
        finishReason: choice.finish_reason ?? null,
        usage: outcome.response.usage ?? null,
        tools: [],
      };
      transcript.turns.push(record);
      if (choice.message.content) transcript.say(`[turn ${turn}] model: ${brief(choice.message.content, 400)}`);
      if (calls.length === 0) {
        state.finished = choice.message.content ?? '';
        transcript.say(`[turn ${turn}] the model answered without a tool call; taken as its final answer`);
      }
      for (const call of calls) {
        const result =
          state.finished !== null ? { content: 'not run: finish was already called', malformed: false, failed: true } : await callTool(call, tools);
        transcript.messages.push({ role: 'tool', tool_call_id: call.id, content: result.content });
        record.tools.push({ name: call.function?.name ?? '', malformed: result.malformed, failed: result.failed });
        transcript.say(
          `[turn ${turn}] ${call.function?.name ?? '?'} ${brief(call.function?.arguments ?? '', 200)}\n    ${result.malformed ? 'MALFORMED ' : ''}${brief(result.content)}`,
        );
        if ('finished' in result && result.finished !== undefined) state.finished = result.finished;
      }
      record.durationMs = Date.now() - t0;
      if (state.finished !== null) return;
      const spent = (state.usage.inputTokens ?? 0) + (state.usage.outputTokens ?? 0);
      if (o.maxTokens !== undefined && spent >= o.maxTokens) {
        state.failure = {
          reason: 'agent-token-budget',
          message: `the agent used ${spent} tokens, its budget is ${o.maxTokens} (agent.maxTokens), before it finished`,
        };
        return;
      }
    }
    state.failure = { reason: 'agent-turn-budget', message: `the agent used all ${o.maxTurns} turns (agent.maxTurns) without calling finish` };
  }
}

interface LoopState {
  usage: AgentUsage;
  finished: string | null;
  failure?: { reason: RejectionReason; message: string };
}

/** Why a model call ended the episode; an endpoint that never answered at all opens the circuit. */
function failureOf(outcome: Exclude<ChatOutcome, { kind: 'ok' }>, turn: number): { reason: RejectionReason; message: string } {
  if (outcome.kind === 'failed' && outcome.unreachable && turn === 1) {
    throw new GenesisError('agent-endpoint-unreachable', outcome.message, {
      hint: 'check agent.baseUrl and that the model server is running and reachable from this machine',
    });
  }
  if (outcome.kind === 'context-length')
    return { reason: 'agent-context-length', message: `the conversation outgrew the model's context window at turn ${turn}: ${outcome.message}` };
  if (outcome.kind === 'rate-limited') return { reason: 'agent-rate-limited', message: outcome.message };
  return { reason: 'agent-model-error', message: outcome.message };
}

function summaryLine(transcript: Transcript, usage: AgentUsage): string {
  const s = transcript.stats();
  const tokens = `tokens in ${usage.inputTokens ?? '?'} (cached ${usage.cachedTokens ?? '?'}), out ${usage.outputTokens ?? '?'}`;
  return `turns ${s.turns}, tool calls ${s.toolCalls} (malformed ${s.malformedToolCalls}, failed ${s.failedToolCalls}), waited ${Math.round(s.waitedMs / 1000)}s; ${tokens}; cost ${usage.costUsd === null ? 'unknown' : `$${usage.costUsd}`}`;
}

/** One response's usage; what the server left out is unknown, not 0. */
function usageOf(usage: ChatUsage | null | undefined): AgentUsage {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    inputTokens: num(usage?.prompt_tokens),
    outputTokens: num(usage?.completion_tokens),
    cachedTokens: num(usage?.prompt_tokens_details?.cached_tokens),
    costUsd: null,
  };
}
