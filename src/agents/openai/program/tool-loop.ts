import { addUsage, zeroUsage, type AgentUsage } from '../../usage/usage.js';
import { GenesisError } from '../../../errors/genesis-error.js';
import { ChatClient, type ChatOutcome } from '../chat/client.js';
import type { ChatUsage, ToolCall } from '../chat/wire.js';
import { callTool, TOOL_SPECS, type ToolContext } from '../tools.js';
import { brief, Transcript, type TurnRecord } from '../transcript.js';
import { FATAL_CODES, type ProgramResult } from './program-result.js';

export const SYSTEM_PROMPT =
  'You are a coding agent working in a git repository, the workspace, through tools: list_files, read_file, search, ' +
  'write_file, edit_file, run_command and finish. Paths are relative to the workspace root. Make the change the task ' +
  'asks for, run its tests with run_command, and call finish with a short summary when you are done. Only the files ' +
  'you leave changed count; nothing you say is read by the gate that verifies them.';

export interface ToolLoopOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  maxTurns: number;
  maxTokens?: number;
  requestTimeoutMs: number;
  maxRetries?: number;
  maxRetryWaitMs?: number;
}

/**
 * The built-in agent's conversation: each turn sends the conversation with the tool specs to an
 * OpenAI-compatible Chat Completions endpoint, carries out the tool calls the model answers with,
 * and sends their results back, until the model calls `finish` (or answers without a tool call),
 * a budget is spent (turns, tokens), or `signal` stops it (the episode's wall time, a stopped run).
 * Every line of the readable log goes to `say` as it happens.
 */
export async function runToolLoop(
  o: ToolLoopOptions,
  prompt: string,
  tools: ToolContext,
  signal: AbortSignal,
  say: (line: string) => void,
): Promise<{ result: ProgramResult; transcript: Transcript }> {
  const client = new ChatClient({
    baseUrl: o.baseUrl,
    ...(o.apiKey ? { apiKey: o.apiKey } : {}),
    requestTimeoutMs: o.requestTimeoutMs,
    ...(o.maxRetries === undefined ? {} : { maxRetries: o.maxRetries }),
    ...(o.maxRetryWaitMs === undefined ? {} : { maxRetryWaitMs: o.maxRetryWaitMs }),
  });
  const transcript = new Transcript(
    { model: o.model, baseUrl: o.baseUrl },
    [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: prompt },
    ],
    say,
  );
  const state: LoopState = { usage: zeroUsage(), finished: null };
  try {
    await converse(o, client, transcript, tools, signal, state);
  } catch (error) {
    if (error instanceof GenesisError && (FATAL_CODES as readonly string[]).includes(error.code)) {
      state.fatal = { code: error.code as (typeof FATAL_CODES)[number], message: error.message };
    } else if (!signal.aborted) {
      throw error;
    }
    // A stopped run or a spent wall time ends the conversation wherever it was.
  }
  const result: ProgramResult = {
    version: 1,
    outcome: signal.aborted ? 'stopped' : state.fatal || state.failure ? 'failed' : 'finished',
    usage: { inputTokens: state.usage.inputTokens, outputTokens: state.usage.outputTokens, cachedTokens: state.usage.cachedTokens },
    ...(state.failure && !signal.aborted ? { failure: state.failure } : {}),
    ...(state.fatal ? { fatal: state.fatal } : {}),
  };
  if (signal.aborted) transcript.finish('stopped', 'the program was told to stop (the wall time or a stopped run)');
  else if (state.fatal) transcript.finish('failed', `${state.fatal.code}: ${state.fatal.message}`);
  else if (state.failure) transcript.finish('failed', `${state.failure.reason}: ${state.failure.message}`);
  else transcript.finish('finished', state.finished ?? '');
  transcript.say(summaryLine(transcript, state.usage));
  return { result, transcript };
}

interface LoopState {
  usage: AgentUsage;
  finished: string | null;
  failure?: NonNullable<ProgramResult['failure']>;
  fatal?: NonNullable<ProgramResult['fatal']>;
}

/** Turns until the model finishes, a budget is spent or the endpoint fails; the outcome goes into `state`. */
async function converse(
  o: ToolLoopOptions,
  client: ChatClient,
  transcript: Transcript,
  tools: ToolContext,
  signal: AbortSignal,
  state: LoopState,
): Promise<void> {
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
      if (signal.aborted) return;
      const result = state.finished !== null ? { content: 'not run: finish was already called', malformed: false, failed: true } : await callTool(call, tools);
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

/** Why a model call ended the episode; an endpoint that never answered at all opens the circuit. */
function failureOf(outcome: Exclude<ChatOutcome, { kind: 'ok' }>, turn: number): NonNullable<ProgramResult['failure']> {
  if (outcome.kind === 'failed' && outcome.unreachable && turn === 1) {
    throw new GenesisError('agent-endpoint-unreachable', outcome.message, {
      hint: 'check agent.baseUrl and that the model server is running and reachable from the agent sandbox',
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
  return `turns ${s.turns}, tool calls ${s.toolCalls} (malformed ${s.malformedToolCalls}, failed ${s.failedToolCalls}), waited ${Math.round(s.waitedMs / 1000)}s; ${tokens}`;
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
