import { setTimeout as sleep } from 'node:timers/promises';
import { GenesisError } from '../../../errors/genesis-error.js';
import { backoffDelay, backoffPolicy } from '../../../retry/backoff-policy.js';
import { isContextLengthError, readErrorBody, retryAfterMs } from './errors.js';
import type { ChatRequest, ChatResponse } from './wire.js';

export interface ChatClientOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Time for one request, response included. */
  requestTimeoutMs: number;
  /** Retries of one request after a 429, a 5xx or a dropped connection. @default 5 */
  maxRetries?: number;
  /** The longest wait a 429 may ask for; a longer one ends the episode. @default 60000 */
  maxRetryWaitMs?: number;
}

/** How one request ended. HTTP failures no other episode could cure are thrown instead. */
export type ChatOutcome =
  | { kind: 'ok'; response: ChatResponse; waitedMs: number }
  | { kind: 'context-length'; message: string }
  | { kind: 'rate-limited'; message: string; waitedMs: number }
  | { kind: 'failed'; message: string; unreachable: boolean };

/**
 * One Chat Completions endpoint. Waits out rate limits (429, honouring `retry-after-ms` and
 * `retry-after`, bounded), retries server errors and dropped connections with backoff, and tells a
 * context-length refusal apart from other errors. Bad credentials (401, 403), an unknown model or
 * endpoint (404) and an exhausted quota throw a non-retryable GenesisError: every episode would
 * fail the same way, so the run's circuit breaker opens.
 */
export class ChatClient {
  private readonly url: string;

  constructor(private readonly options: ChatClientOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatOutcome> {
    const maxRetries = this.options.maxRetries ?? 5;
    const maxWait = this.options.maxRetryWaitMs ?? 60_000;
    const policy = backoffPolicy({ initialMs: Math.min(1000, maxWait), maxMs: maxWait, jitter: 0.5, maxRetries });
    let waitedMs = 0;
    for (let attempt = 0; ; attempt++) {
      // null: no retry left.
      const backoff = backoffDelay(policy, attempt + 1, Math.random());
      let response: Response;
      try {
        response = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
          body: JSON.stringify(request),
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.requestTimeoutMs)]),
        });
      } catch (error) {
        if (signal.aborted) throw error;
        const why = describeFetchError(error);
        if (backoff !== null) {
          await sleep(backoff, undefined, { signal });
          waitedMs += backoff;
          continue;
        }
        return { kind: 'failed', message: `the model endpoint ${this.url} did not answer: ${why}`, unreachable: true };
      }
      const text = await response.text();
      if (response.ok) return parseResponse(text, waitedMs);
      const body = readErrorBody(text);
      const status = `${response.status}${body.message ? `: ${body.message}` : ''}`;
      if (response.status === 401 || response.status === 403) {
        throw new GenesisError('agent-auth-failed', `the model endpoint refused the credentials (${status})`, {
          hint: 'check agent.apiKeyEnv and the variable it names',
        });
      }
      if (response.status === 404) {
        throw new GenesisError('agent-model-not-found', `the model endpoint ${this.url} answered 404 (${body.message || 'not found'})`, {
          hint: 'check agent.baseUrl (it usually ends in /v1) and agent.model',
        });
      }
      if (response.status === 429 && body.code === 'insufficient_quota') {
        throw new GenesisError('agent-quota-exhausted', `the model endpoint says the quota is used up (${status})`, {
          hint: 'add credit or raise the quota; retrying cannot help',
        });
      }
      if (isContextLengthError(response.status, body)) return { kind: 'context-length', message: body.message || status };
      if (response.status === 429 || response.status >= 500) {
        const asked = retryAfterMs(response.headers);
        const wait = asked ?? backoff ?? 0;
        if (backoff !== null && wait <= maxWait) {
          await sleep(wait, undefined, { signal });
          waitedMs += wait;
          continue;
        }
        if (response.status === 429) {
          const why =
            wait > maxWait ? `it asked to wait ${seconds(wait)}, more than the ${seconds(maxWait)} Genesis waits` : `still limited after ${attempt + 1} tries`;
          return { kind: 'rate-limited', message: `the model endpoint is rate limiting (${status}); ${why}`, waitedMs };
        }
      }
      return { kind: 'failed', message: `the model endpoint answered ${status}`, unreachable: false };
    }
  }
}

function parseResponse(text: string, waitedMs: number): ChatOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'failed', message: `the model endpoint sent a response that is not JSON: ${text.slice(0, 200)}`, unreachable: false };
  }
  const response = value as ChatResponse;
  if (!Array.isArray(response?.choices) || !response.choices[0]?.message) {
    return { kind: 'failed', message: `the model endpoint sent a response without choices: ${text.slice(0, 200)}`, unreachable: false };
  }
  return { kind: 'ok', response, waitedMs };
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (error instanceof Error && error.name === 'TimeoutError') return 'the request timed out';
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
