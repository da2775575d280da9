import type { ModelApi } from './model-apis.js';
import type { SseEvent } from './sse-events.js';

/** Tokens one model call spent, as its response said. Input counts cached input too; output counts reasoning too. */
export interface WireTokens {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

type Json = Record<string, unknown>;

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
const obj = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});

function parse(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** Anthropic counts cache writes and reads apart from input_tokens; all three are input. */
function anthropicTokens(usage: Json, earlier: WireTokens | null): WireTokens {
  const read = num(usage.cache_read_input_tokens);
  const has = (key: string) => typeof usage[key] === 'number';
  const input = num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + read;
  return {
    // A message_delta carries output (cumulative) and sometimes input again: what it lacks comes from message_start.
    inputTokens: has('input_tokens') || !earlier ? input : earlier.inputTokens,
    cachedTokens: has('cache_read_input_tokens') || !earlier ? read : earlier.cachedTokens,
    outputTokens: num(usage.output_tokens),
    reasoningTokens: 0,
  };
}

function openaiTokens(usage: Json): WireTokens {
  // Responses say input/output_tokens, Chat Completions prompt/completion_tokens; both include cached input and reasoning output.
  const input = num(usage.input_tokens ?? usage.prompt_tokens);
  const output = num(usage.output_tokens ?? usage.completion_tokens);
  const cached = num(obj(usage.input_tokens_details ?? usage.prompt_tokens_details).cached_tokens);
  const reasoning = num(obj(usage.output_tokens_details ?? usage.completion_tokens_details).reasoning_tokens);
  return { inputTokens: input, outputTokens: output, cachedTokens: cached, reasoningTokens: reasoning };
}

function geminiTokens(meta: Json): WireTokens {
  const thoughts = num(meta.thoughtsTokenCount);
  return {
    inputTokens: num(meta.promptTokenCount),
    outputTokens: num(meta.candidatesTokenCount) + thoughts,
    cachedTokens: num(meta.cachedContentTokenCount),
    reasoningTokens: thoughts,
  };
}

/** Words without which an event carries neither usage nor an end nor an error, in any of the four APIs. */
const MAY_MATTER = ['usage', 'Usage', 'message_stop', 'error', 'response.', 'finishReason'];

/** Whether a call to this path spends tokens at all (counting tokens does not). */
export function spendsTokens(path: string): boolean {
  const bare = path.split('?')[0]!;
  return !/count_tokens$|:countTokens$/.test(bare);
}

/**
 * Reads what one model call spent from its response as it arrives: a JSON body at its end, or the
 * usage each API puts in its stream (Anthropic's message_start and message_delta, the Responses
 * API's response.completed, Chat Completions' last chunk, Gemini's usageMetadata on each chunk),
 * and whether the stream reached its own end (a stream that stops before it was cut).
 */
export class CallUsage {
  private tokens: WireTokens | null = null;
  private finished = false;
  private failedInStream: string | null = null;

  constructor(private readonly api: ModelApi) {}

  /** The tokens so far (a stream's figures grow as it goes), or null when the response named none. */
  current(): WireTokens | null {
    return this.tokens;
  }

  /** The stream reached its end marker (or the body was whole JSON). */
  complete(): boolean {
    return this.finished;
  }

  /** An error the model sent inside a stream that had started well (Anthropic's `event: error`, a failed response). */
  streamError(): string | null {
    return this.failedInStream;
  }

  /** A whole JSON body. */
  body(text: string): void {
    const json = parse(text);
    this.finished = true;
    if (!json) return;
    if (this.api === 'anthropic-messages' && json.usage) this.tokens = anthropicTokens(obj(json.usage), null);
    else if ((this.api === 'openai-responses' || this.api === 'openai-chat') && json.usage) this.tokens = openaiTokens(obj(json.usage));
    else if (this.api === 'gemini' && json.usageMetadata) this.tokens = geminiTokens(obj(json.usageMetadata));
  }

  /** One server-sent event. */
  event(event: SseEvent): void {
    if (this.api === 'openai-chat' && event.data.trim() === '[DONE]') {
      this.finished = true;
      return;
    }
    // Most events are token deltas: only those that can carry usage, an end or an error are parsed.
    if (!MAY_MATTER.some((mark) => event.data.includes(mark) || event.event.includes(mark))) return;
    const json = parse(event.data);
    if (!json) return;
    const type = typeof json.type === 'string' ? json.type : event.event;
    if (this.api === 'anthropic-messages') {
      if (type === 'message_start') this.tokens = anthropicTokens(obj(obj(json.message).usage), null);
      else if (type === 'message_delta' && json.usage) this.tokens = anthropicTokens(obj(json.usage), this.tokens);
      else if (type === 'message_stop') this.finished = true;
      else if (type === 'error') this.failedInStream = String(obj(json.error).type ?? 'error');
    } else if (this.api === 'openai-responses') {
      if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
        const usage = obj(json.response).usage;
        if (usage) this.tokens = openaiTokens(obj(usage));
        this.finished = true;
        if (type === 'response.failed') this.failedInStream = String(obj(obj(json.response).error).code ?? 'response.failed');
      } else if (type === 'error') this.failedInStream = String(json.code ?? 'error');
    } else if (this.api === 'openai-chat') {
      if (json.usage) this.tokens = openaiTokens(obj(json.usage));
    } else if (this.api === 'gemini') {
      if (json.usageMetadata) this.tokens = geminiTokens(obj(json.usageMetadata));
      const candidates = Array.isArray(json.candidates) ? json.candidates : [];
      if (candidates.some((c) => typeof obj(c).finishReason === 'string')) this.finished = true;
    }
  }
}
