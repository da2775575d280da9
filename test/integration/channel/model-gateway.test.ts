import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelGateway, type OpenedChannel, type OpenSpec } from '../../../src/channel/model-gateway.js';
import type { ChannelFailure } from '../../../src/channel/episode-channel.js';
import { startAnthropicServer } from '../../helpers/model-servers/anthropic-messages.js';
import { startChatCompletionsServer } from '../../helpers/model-servers/chat-completions.js';
import { startGeminiServer } from '../../helpers/model-servers/gemini-generate.js';
import { startResponsesServer } from '../../helpers/model-servers/openai-responses.js';
import type { ScriptedServer } from '../../helpers/model-servers/scripted-server.js';
import { makeTestCa } from '../../helpers/test-ca.js';
import { modelRouteOf } from '../../../src/agents/model-route.js';
import { beforeLaunch } from '../../../src/agents/channel-result.js';

const REAL_KEY = 'sk-real-key-never-in-a-sandbox';
// A gateway per test: a usage-limit hold of one test's key must not hold the next test.
let gateway: ModelGateway;
beforeEach(() => {
  gateway = new ModelGateway();
});
let server: ScriptedServer | undefined;
let opened: OpenedChannel[] = [];
afterEach(async () => {
  for (const o of opened) o.close();
  opened = [];
  await server?.close();
  server = undefined;
  gateway.close();
});

async function open(
  upstream: string,
  more: Partial<OpenSpec> = {},
  variable = 'ANTHROPIC_API_KEY',
): Promise<{ channel: OpenedChannel; failures: ChannelFailure[]; url: string; key: string }> {
  const failures: ChannelFailure[] = [];
  const channel = await gateway.open({
    label: 'test-agent',
    upstream: new URL(upstream),
    credentials: { [variable]: REAL_KEY },
    stallMs: 60_000,
    priceOf: (model) => (model?.startsWith('claude') ? { inputPerMTok: 3, outputPerMTok: 15 } : null),
    onFailure: (f) => failures.push(f),
    ...more,
  });
  opened.push(channel);
  return { channel, failures, url: `http://127.0.0.1:${channel.port}`, key: channel.env[variable]! };
}

const anthropicCall = (url: string, key: string, stream = true) =>
  fetch(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('the model gateway', () => {
  it('swaps the stand-in for the real key and measures a streamed Anthropic call on the wire', async () => {
    server = await startAnthropicServer();
    const { channel, url, key } = await open(server.origin);
    expect(key).not.toBe(REAL_KEY);
    const res = await anthropicCall(url, key);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('message_stop');
    expect(server.requests[0]!.headers['x-api-key']).toBe(REAL_KEY);
    expect(JSON.stringify(server.requests)).not.toContain(key);
    const report = channel.channel.report();
    const sent = server.sent[0]!;
    expect(report.tokens).toMatchObject({ inputTokens: sent.input, outputTokens: sent.output });
    expect(report.costUsd).toBeCloseTo((sent.input * 3 + sent.output * 15) / 1e6, 9);
    expect(report.conversation.calls[0]).toMatchObject({ status: 200, model: 'claude-sonnet-4-5', api: 'anthropic-messages' });
  });

  it('asks a streamed Chat Completions call for its usage and reads it; Responses and Gemini streams likewise', async () => {
    server = await startChatCompletionsServer();
    let { channel, url, key } = await open(`${server.origin}/v1`, {}, 'OPENAI_API_KEY');
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await chat.text()).toContain('[DONE]');
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${REAL_KEY}`);
    expect(channel.channel.report().tokens).toMatchObject({ inputTokens: server.sent[0]!.input, outputTokens: server.sent[0]!.output });
    await server.close();

    server = await startResponsesServer();
    ({ channel, url, key } = await open(`${server.origin}/v1`, {}, 'OPENAI_API_KEY'));
    const responses = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5-codex', stream: true, input: [{ role: 'user', content: 'hi' }] }),
    });
    await responses.text();
    expect(channel.channel.report().tokens).toMatchObject({ inputTokens: server.sent[0]!.input, outputTokens: server.sent[0]!.output });
    await server.close();

    server = await startGeminiServer();
    ({ channel, url, key } = await open(server.origin, {}, 'GEMINI_API_KEY'));
    const gemini = await fetch(`${url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    await gemini.text();
    expect(server.requests[0]!.headers['x-goog-api-key']).toBe(REAL_KEY);
    expect(channel.channel.report().tokens).toMatchObject({ inputTokens: server.sent[0]!.input, outputTokens: server.sent[0]!.output });
    expect(channel.channel.report().conversation.calls[0]).toMatchObject({ model: 'gemini-2.5-pro' });
  });

  it("refuses another episode's stand-in, a key of its own, and a closed episode's stand-in, in the vendor's shape", async () => {
    server = await startAnthropicServer();
    const a = await open(server.origin);
    const b = await open(server.origin);
    const crossed = await anthropicCall(a.url, b.key);
    expect(crossed.status).toBe(401);
    expect(await crossed.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((await anthropicCall(a.url, REAL_KEY)).status).toBe(401);
    a.channel.close();
    await expect(anthropicCall(a.url, a.key)).rejects.toThrow();
    expect(server.requests).toHaveLength(0);
  });

  it('reads a 429 with its reset headers, ends the episode, and holds every episode on that credential', async () => {
    server = await startAnthropicServer({ mode: 'usage-limit' });
    server.resetAfterSec = 120;
    const first = await open(server.origin);
    const before = Date.now();
    expect((await anthropicCall(first.url, first.key)).status).toBe(429);
    expect(first.failures).toEqual([expect.objectContaining({ kind: 'usage-limit' })]);
    const reset = (first.failures[0] as { resetAt: number }).resetAt;
    expect(reset).toBeGreaterThanOrEqual(before + 119_000);
    expect(reset).toBeLessThanOrEqual(Date.now() + 121_000);
    // Another episode with the same key never reaches the vendor until the reset.
    server.mode = 'work';
    const second = await open(server.origin);
    const held = await anthropicCall(second.url, second.key);
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(100);
    expect(server.requests).toHaveLength(1);
    expect(second.failures).toEqual([expect.objectContaining({ kind: 'usage-limit', resetAt: reset })]);
  });

  it('ends a call the model never answers after stallSec, and sees a stream the server cut', async () => {
    server = await startAnthropicServer({ mode: 'stall' });
    const stalled = await open(server.origin, { stallMs: 500 });
    const started = Date.now();
    const res = await anthropicCall(stalled.url, stalled.key);
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stalled.failures).toEqual([expect.objectContaining({ kind: 'stalled' })]);

    server.mode = 'cut';
    const cut = await open(server.origin);
    const answer = await anthropicCall(cut.url, cut.key);
    await expect(answer.text()).rejects.toThrow();
    expect(cut.channel.channel.report().failure).toMatchObject({ kind: 'stream-cut' });
    // A cut is the CLI's to retry: it does not end the episode by itself.
    expect(cut.failures).toEqual([]);
  });

  it('says the model is unreachable when nothing listens, and refuses calls past the token budget', async () => {
    server = await startAnthropicServer();
    const port = server.port;
    await server.close();
    server = undefined;
    const gone = await open(`http://127.0.0.1:${port}`);
    expect((await anthropicCall(gone.url, gone.key)).status).toBe(503);
    expect(gone.failures).toEqual([expect.objectContaining({ kind: 'unreachable' })]);

    server = await startAnthropicServer();
    const capped = await open(server.origin, { maxTokens: 500 });
    expect((await anthropicCall(capped.url, capped.key)).status).toBe(200);
    const refused = await anthropicCall(capped.url, capped.key);
    expect(refused.status).toBe(429);
    expect(capped.failures).toEqual([expect.objectContaining({ kind: 'budget' })]);
    expect(server.requests).toHaveLength(1);
  });
});

describe('the model gateway to a vendor over TLS', () => {
  it('forwards to an https model whose certificate GENESIS_MODEL_CA vouches for, and to no model it does not', async () => {
    const ca = await makeTestCa();
    server = await startAnthropicServer({ tls: { key: ca.key, cert: ca.cert } });
    expect(server.origin).toMatch(/^https:/);
    // Without the test CA, the certificate is not trusted: nothing is sent.
    const untrusting = await open(server.origin);
    expect((await anthropicCall(untrusting.url, untrusting.key)).status).toBe(502);
    expect(untrusting.failures).toEqual([expect.objectContaining({ kind: 'unreachable' })]);
    expect(server.requests).toHaveLength(0);
    process.env.GENESIS_MODEL_CA = ca.caFile;
    try {
      const trusting = await open(server.origin);
      const answer = await anthropicCall(trusting.url, trusting.key);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('message_stop');
      expect(server.requests[0]!.headers['x-api-key']).toBe(REAL_KEY);
      expect(trusting.channel.channel.report().tokens).toMatchObject({ inputTokens: server.sent[0]!.input });
    } finally {
      delete process.env.GENESIS_MODEL_CA;
    }
  });
});

describe("a task's own budget at the gateway", () => {
  it("refuses the next call once what was left of the task's budget is spent, and starts no agent for a task with none left", async () => {
    server = await startAnthropicServer();
    const capped = await open(server.origin, { taskTokens: 600 });
    expect((await anthropicCall(capped.url, capped.key)).status).toBe(200);
    expect((await anthropicCall(capped.url, capped.key)).status).toBe(429);
    expect(capped.failures).toEqual([expect.objectContaining({ kind: 'budget', world: false, message: expect.stringContaining('agent.maxTaskTokens') })]);
    expect(server.requests).toHaveLength(1);
    const route = modelRouteOf({ baseUrl: server.origin, variables: [], sandbox: 'none', hostNetwork: false }, gateway, {
      stallMs: 60_000,
      priceOf: () => null,
    })!;
    expect(await beforeLaunch(route, { taskTokens: 0 })).toMatchObject({
      reason: 'agent-token-budget',
      message: expect.stringContaining('no agent was started'),
    });
    expect(await beforeLaunch(route, { taskTokens: 10 })).toBeNull();
  });
});
