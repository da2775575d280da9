import { describe, expect, it } from 'vitest';
import { classifyApiError, resetTimeOf } from '../../../src/agents/command/presets/cli-failure.js';
import { PRESETS, type PresetName } from '../../../src/agents/command/presets/index.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');

/** Feeds stdout (and stderr) to the preset's reader in small chunks, as pipes deliver them, and asks what failed. */
function failureOf(preset: PresetName, stdout: string, stderr = '') {
  const reader = PRESETS[preset].usageReader();
  for (let i = 0; i < stdout.length; i += 9) reader.push(stdout.slice(i, i + 9));
  for (let i = 0; i < stderr.length; i += 9) reader.pushError?.(stderr.slice(i, i + 9));
  return reader.failure?.() ?? null;
}

const retry = (status: number, error: string, delay = 600) =>
  `${JSON.stringify({ type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: delay, error_status: status, error })}\n`;

describe('the failure classes each CLI reports in its output', () => {
  it("reads Claude Code's first retried 401 as refused credentials (it would retry until killed)", () => {
    expect(failureOf('claude-code', retry(401, 'authentication_failed'))).toMatchObject({ kind: 'auth' });
  });

  it("reads Claude Code's retried 429 as a usage limit resetting after its retry delay", () => {
    const found = failureOf('claude-code', retry(429, 'rate_limit', 30_000));
    expect(found).toMatchObject({ kind: 'usage-limit' });
    expect(found?.kind === 'usage-limit' && found.resetAt! - Date.now()).toBeGreaterThan(25_000);
  });

  it("reads Claude Code's 529s as an overloaded model only after it retried three times, and a lost connection as nothing", () => {
    expect(failureOf('claude-code', retry(529, 'overloaded').repeat(2))).toBeNull();
    expect(failureOf('claude-code', retry(529, 'overloaded').repeat(3))).toMatchObject({ kind: 'overloaded' });
    expect(failureOf('claude-code', `${JSON.stringify({ type: 'system', subtype: 'api_retry', error_status: null, error: 'unknown' })}\n`)).toBeNull();
  });

  it("reads Claude Code's subscription limit in its failed result, with the reset time it names", () => {
    const result = { type: 'result', subtype: 'success', is_error: true, result: 'Claude AI usage limit reached|1796212800', usage: {} };
    expect(failureOf('claude-code', `${JSON.stringify(result)}\n`)).toEqual({ kind: 'usage-limit', message: expect.any(String), resetAt: 1796212800_000 });
  });

  it("reads Codex's failed turn: a 401, a usage limit, a model at capacity", () => {
    const failed = (message: string) => `${JSON.stringify({ type: 'turn.failed', error: { message } })}\n`;
    expect(failureOf('codex', failed('unexpected status 401 Unauthorized: Incorrect API key provided'))).toMatchObject({ kind: 'auth' });
    expect(failureOf('codex', failed('You’ve hit your usage limit. Try again later.'))).toMatchObject({ kind: 'usage-limit', resetAt: null });
    expect(failureOf('codex', failed('Selected model is at capacity. Please try a different model.'))).toMatchObject({ kind: 'overloaded' });
    // A retried error before a turn that completed is no failure.
    expect(failureOf('codex', `${JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5 (stream disconnected)' })}\n`)).toBeNull();
  });

  it("reads opencode's error event with the status of the refused call", () => {
    const event = {
      type: 'error',
      error: { name: 'APIError', data: { message: 'Incorrect API key provided: sk-test.', statusCode: 401, isRetryable: false } },
    };
    expect(failureOf('opencode', `${JSON.stringify(event)}\n`)).toMatchObject({ kind: 'auth' });
    const limited = { type: 'error', error: { name: 'APIError', data: { message: 'Rate limit reached. Please try again in 20s.', statusCode: 429 } } };
    expect(failureOf('opencode', `${JSON.stringify(limited)}\n`)).toMatchObject({ kind: 'usage-limit' });
  });

  it("reads opencode's logged overloads, which its JSON output never shows, only after three", () => {
    const logged = (n: number) =>
      `timestamp=2026-12-06T05:08:5${n}.854Z level=ERROR run=f69 message="stream error" providerID=genesis modelID=m session.id=ses_1 small=false agent=build mode=primary error.error="AI_APICallError: The server is overloaded. Please try again later."\n`;
    expect(failureOf('opencode', '', logged(1) + logged(2))).toBeNull();
    expect(failureOf('opencode', '', logged(1) + logged(2) + logged(3))).toMatchObject({ kind: 'overloaded', message: expect.stringContaining('overloaded') });
  });

  it("reads Gemini CLI's error object, which it prints on stderr, and its retried quota refusals", () => {
    const error = {
      session_id: 's',
      error: { type: 'Error', message: '{"error":{"code":400,"message":"API key not valid. Please pass a valid API key."}}', code: 400 },
    };
    expect(failureOf('gemini', '', `Some warning\n${JSON.stringify(error, null, 2)}`)).toMatchObject({ kind: 'auth' });
    expect(failureOf('gemini', '', 'Attempt 1 failed: You exceeded your current quota. Please retry in 30s.\n')).toMatchObject({ kind: 'usage-limit' });
    expect(failureOf('gemini', `${JSON.stringify({ response: 'Done.', stats: {} }, null, 2)}\n`)).toBeNull();
  });

  it("reads Gemini CLI's retried 503s as an overloaded model only after it retried three times", () => {
    const attempt = (n: number) =>
      `Attempt ${n} failed with status 503. Retrying with backoff... _ApiError: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}\n    at retryWithBackoff (bundle.js:1:1)\n  status: 503\n}\n`;
    expect(failureOf('gemini', '', attempt(1) + attempt(2))).toBeNull();
    expect(failureOf('gemini', '', attempt(1) + attempt(2) + attempt(3))).toMatchObject({ kind: 'overloaded', message: expect.stringContaining('overloaded') });
    const limited = 'Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,"message":"Quota exceeded"}}\n';
    expect(failureOf('gemini', '', limited)).toMatchObject({ kind: 'usage-limit' });
  });
});

describe('the failure classes of Copilot CLI and Qwen Code, as their pinned versions print them', () => {
  /** Copilot's event for one refused call (fields it also prints, such as the request's size, left out). */
  const callFailure = (statusCode: number, message: string, retryAttempt = 0) =>
    `${JSON.stringify({
      type: 'model.call_failure',
      data: { model: 'my-model', statusCode, retryAttempt, failureKind: 'api', isByok: true, errorMessage: JSON.stringify({ message, type: 'requests' }) },
      ephemeral: true,
    })}\n`;

  it("reads Copilot's first refused call as refused credentials (it retries a 401 three times) or a limit with the reset it names", () => {
    expect(failureOf('copilot', callFailure(401, 'Incorrect API key provided: sk-test.'))).toMatchObject({ kind: 'auth' });
    const found = failureOf('copilot', callFailure(429, 'Rate limit reached. Please try again in 30s.'));
    expect(found).toMatchObject({ kind: 'usage-limit' });
    expect(found?.kind === 'usage-limit' && found.resetAt! - Date.now()).toBeGreaterThan(25_000);
    // A successful call says nothing.
    expect(failureOf('copilot', `${JSON.stringify({ type: 'model.call_final_result', data: { result: 'success' } })}\n`)).toBeNull();
  });

  it("reads Copilot's 503s as an overloaded model at the third retry, or when it gives up sooner", () => {
    const overloaded = (n: number) => callFailure(503, 'The server is overloaded. Please try again later.', n);
    expect(failureOf('copilot', overloaded(0) + overloaded(1))).toBeNull();
    expect(failureOf('copilot', overloaded(0) + overloaded(1) + overloaded(2))).toMatchObject({ kind: 'overloaded' });
    const gaveUp = {
      type: 'session.error',
      data: {
        errorType: 'query',
        message: 'Failed to get response from the AI model; retried 5 times. Last error: 503 The server is overloaded.',
        statusCode: 503,
      },
    };
    expect(failureOf('copilot', overloaded(0) + `${JSON.stringify(gaveUp)}\n`)).toMatchObject({ kind: 'overloaded' });
  });

  it("reads Qwen Code's refused key from its error result, and its retried limit and overload from the line it prints on stderr", () => {
    const result = {
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 },
      error: { message: '[API Error: 401 Incorrect API key provided: sk-test.]' },
    };
    expect(failureOf('qwen-code', `${JSON.stringify(result)}\n`)).toMatchObject({ kind: 'auth' });
    expect(failureOf('qwen-code', '', 'Retrying in 60s (attempt 1/10): [API Error: 503 The server is overloaded. Please try again later.]\n')).toMatchObject({
      kind: 'overloaded',
    });
    const limited = failureOf('qwen-code', '', 'Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached. Please try again in 30s.]\n');
    expect(limited).toMatchObject({ kind: 'usage-limit' });
    expect(limited?.kind === 'usage-limit' && limited.resetAt! - Date.now()).toBeGreaterThan(25_000);
    // Its warnings on stderr, and a model that merely writes the words, are no refusal.
    expect(failureOf('qwen-code', '', 'Ripgrep not available: spawn rg EACCES. Falling back to built-in grep.\n')).toBeNull();
    const said = (text: string) => `${JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } })}\n`;
    expect(failureOf('qwen-code', said('The log shows [API Error: 401 Unauthorized] from an old run; I fixed the key loader.'))).toBeNull();
    expect(failureOf('qwen-code', said('[API Error: 401 Incorrect API key provided: sk-test.]'))).toMatchObject({ kind: 'auth' });
  });
});

describe('classifying a refused call', () => {
  it('tells refused credentials, limits and overload apart, and leaves other errors alone', () => {
    expect(classifyApiError(401, '')).toMatchObject({ kind: 'auth' });
    expect(classifyApiError(400, 'API key not valid')).toMatchObject({ kind: 'auth' });
    expect(classifyApiError(429, 'slow down')).toMatchObject({ kind: 'usage-limit' });
    expect(classifyApiError(529, '')).toMatchObject({ kind: 'overloaded' });
    expect(classifyApiError(500, 'internal error')).toBeNull();
    expect(classifyApiError(null, 'connection refused')).toBeNull();
  });

  it('finds the reset time however a vendor words it', () => {
    expect(resetTimeOf('Please try again in 20s.', NOW)).toBe(NOW + 20_000);
    expect(resetTimeOf('Please retry in 12.5s.', NOW)).toBe(NOW + 12_500);
    expect(resetTimeOf('"retryDelay":"30s"', NOW)).toBe(NOW + 30_000);
    expect(resetTimeOf('"resets_in_seconds":45', NOW)).toBe(NOW + 45_000);
    expect(resetTimeOf('Claude AI usage limit reached|1796212800', NOW)).toBe(1796212800_000);
    expect(resetTimeOf('try later', NOW)).toBeNull();
  });
});
