import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { NoneAgentSandbox } from '../../../src/sandbox/agent/none-agent-sandbox.js';
import { OpenAIAgent, type OpenAIAgentOptions } from '../../../src/agents/openai/openai-agent.js';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { loadRecording, startReplayServer, type ReplayServer } from './replay-server.js';
import { startToolScriptServer } from '../../helpers/model-servers/chat-tool-script.js';

const A_TEST =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { a } from '../src/a.js';\ntest('a says a', () => assert.equal(a(), 'a'));\n";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(name: string): Promise<ReplayServer> {
  server = await startReplayServer(await loadRecording(name));
  return server;
}

function agent(baseUrl: string, more: Partial<OpenAIAgentOptions> = {}): OpenAIAgent {
  return new OpenAIAgent({
    baseUrl,
    model: 'gpt-4.1-mini',
    maxTurns: 20,
    requestTimeoutMs: 10_000,
    commandTimeoutMs: 20_000,
    commandOutputBytes: 16_384,
    price: { inputPerMTok: 0.4, outputPerMTok: 1.6, cachedInputPerMTok: 0.1 },
    sandbox: new NoneAgentSandbox(),
    ...more,
  });
}

async function input(prompt: string, files: Record<string, string> = {}, more: Partial<AgentRunInput> = {}): Promise<AgentRunInput> {
  const episodeDir = await tempDir('genesis-openai-');
  const workspace = join(episodeDir, 'ws');
  for (const [path, content] of Object.entries({ 'package.json': '{ "type": "module" }\n', ...files })) {
    await mkdir(join(workspace, path, '..'), { recursive: true });
    await writeFile(join(workspace, path), content);
  }
  const promptFile = join(episodeDir, 'prompt.md');
  await writeFile(promptFile, prompt);
  return {
    workspace,
    promptFile,
    prompt,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GENESIS_EPISODE_ID: 'e1' },
    timeoutMs: 60_000,
    taskId: 't',
    attempt: 1,
    ...more,
  };
}

describe('the openai agent against a replayed Chat Completions server', () => {
  it('lists, reads, writes, edits, searches, runs the tests and finishes, recording usage, cost and the transcript', async () => {
    const s = await serve('tool-calls');
    const run = await agent(s.baseUrl).run(await input('Make module a.\n', { 'test/a.test.js': A_TEST, 'src/README.md': 'modules\n' }));
    expect(s.mismatches).toEqual([]);
    expect(run).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    expect(run.failure).toBeUndefined();
    expect(run.usage).toEqual({ inputTokens: 8761, outputTokens: 211, cachedTokens: 6656, costUsd: 0.001845 });
    // (2105 uncached × $0.40 + 6656 cached × $0.10 + 211 out × $1.60) per million, rounded to a millionth
    expect((2105 * 0.4 + 6656 * 0.1 + 211 * 1.6) / 1e6).toBeCloseTo(0.001845, 6);
    const transcript = JSON.parse(run.transcript!) as { stats: Record<string, number>; messages: Array<{ role: string }>; end: { outcome: string } };
    expect(transcript.stats).toMatchObject({ turns: 7, toolCalls: 7, malformedToolCalls: 0 });
    expect(transcript.messages[0]).toMatchObject({ role: 'system' });
    expect(transcript.messages[1]).toMatchObject({ role: 'user', content: 'Make module a.\n' });
    expect(transcript.end.outcome).toBe('finished');
    expect(run.log).toContain('[turn 6] run_command');
    expect(run.log).toContain("finished: Added src/a.js, exporting a() which returns 'a'");
  });

  it('leaves the change in the workspace', async () => {
    const s = await serve('tool-calls');
    const run = await input('Make module a.\n', { 'test/a.test.js': A_TEST });
    await agent(s.baseUrl).run(run);
    expect(await readFile(join(run.workspace, 'src/a.js'), 'utf8')).toBe("export const a = () => 'a';\n");
  });

  it('sends the API key from the named variable and never passes it to the commands it runs', async () => {
    const s = await serve('tool-calls');
    process.env.GENESIS_TEST_OPENAI_KEY = 'sk-test-123';
    try {
      const run = await input('Make module a.\n', { 'test/a.test.js': A_TEST });
      await agent(s.baseUrl, { apiKeyEnv: 'GENESIS_TEST_OPENAI_KEY' }).run(run);
      expect(s.requests.every((r) => r.authorization === 'Bearer sk-test-123')).toBe(true);
      expect(JSON.stringify(s.requests.at(-1)!.body.messages)).not.toContain('sk-test-123');
    } finally {
      delete process.env.GENESIS_TEST_OPENAI_KEY;
    }
  });

  it('refuses to start when the key variable is not set, without retrying', async () => {
    const s = await serve('tool-calls');
    const error = await agent(s.baseUrl, { apiKeyEnv: 'GENESIS_TEST_NO_SUCH_KEY' })
      .run(await input('Make module a.\n'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisError);
    expect(error).toMatchObject({ code: 'agent-credentials-missing', retryable: false });
    expect(s.requests).toHaveLength(0);
  });

  it('answers malformed tool calls with an error the model can act on, and counts them', async () => {
    const s = await serve('malformed-tool-calls');
    const run = await input('Write the notes.\n');
    const result = await agent(s.baseUrl).run(run);
    expect(s.mismatches).toEqual([]);
    expect(result.exitCode).toBe(0);
    const transcript = JSON.parse(result.transcript!) as { stats: Record<string, number> };
    expect(transcript.stats).toMatchObject({ turns: 5, toolCalls: 6, malformedToolCalls: 3 });
    expect(result.log).toContain('MALFORMED error: the arguments of write_file are not valid JSON');
    expect(result.log).toContain('malformed 3');
    expect(await readFile(join(run.workspace, 'notes.txt'), 'utf8')).toBe('hi\n');
  });

  it('waits out a 429 for as long as retry-after says, then carries on', async () => {
    const s = await serve('rate-limit');
    const result = await agent(s.baseUrl).run(await input('Mind the rate limit.\n'));
    expect(s.mismatches).toEqual([]);
    expect(result.exitCode).toBe(0);
    const [limited, retried] = s.requests;
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(950);
    expect(JSON.parse(result.transcript!).stats.waitedMs).toBe(1000);
  });

  it('ends as failed with agent-rate-limited when the endpoint asks to wait longer than allowed', async () => {
    const s = await serve('rate-limit');
    const result = await agent(s.baseUrl, { maxRetryWaitMs: 500 }).run(await input('Mind the rate limit.\n'));
    // The 429 was not waited out: no second request.
    expect(s.requests).toHaveLength(1);
    expect(result.exitCode).toBe(1);
    expect(result.failure).toMatchObject({ reason: 'agent-rate-limited' });
    expect(result.failure!.message).toMatch(
      /rate limiting \(429: Rate limit reached for gpt-4.1-mini.*\); it asked to wait 1.0s, more than the 0.5s Genesis waits$/,
    );
  });

  describe('when the conversation outgrows the context window', () => {
    it('ends the episode as failed with agent-context-length and the server message (OpenAI)', async () => {
      const s = await serve('context-length');
      const result = await agent(s.baseUrl).run(await input('Read the big file.\n', { 'big.txt': 'line 1\n'.repeat(1000) }));
      expect(result.exitCode).toBe(1);
      expect(result.failure).toEqual({
        reason: 'agent-context-length',
        message: expect.stringMatching(/^the conversation outgrew the model's context window at turn 2: This model's maximum context length is 8192 tokens/),
      });
      expect(result.usage).toMatchObject({ inputTokens: 7000, outputTokens: 18 });
    });

    it("recognises llama.cpp server's exceed_context_size_error too", async () => {
      const s = await serve('context-length');
      const result = await agent(s.baseUrl, { model: 'qwen2.5-coder-7b-instruct', price: null }).run(
        await input('Read it on llama.cpp.\n', { 'big.txt': 'line 1\n' }),
      );
      expect(result.failure).toMatchObject({ reason: 'agent-context-length', message: expect.stringContaining('exceeds the available context size') });
      expect(result.usage).toEqual({ inputTokens: 7000, outputTokens: 18, cachedTokens: null, costUsd: null });
    });
  });

  it('refuses paths outside the workspace, through symlinks and into .git, and records no usage the server did not report', async () => {
    const s = await serve('path-escapes');
    const run = await input('Try to escape.\n');
    await mkdir(join(run.workspace, '.git', 'hooks'), { recursive: true });
    await symlink('/etc', join(run.workspace, 'link'));
    const result = await agent(s.baseUrl, { model: 'llama3.1:8b', price: null }).run(run);
    expect(s.mismatches).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(await readFile(join(run.workspace, '..', 'outside.txt'), 'utf8').catch(() => null)).toBeNull();
    expect(await readFile(join(run.workspace, '.git/hooks/pre-commit'), 'utf8').catch(() => null)).toBeNull();
    expect(await readFile(join(run.workspace, 'inside.txt'), 'utf8')).toBe('ok\n');
    expect(result.usage).toBeUndefined();
    expect(result.log).toContain('the model answered without a tool call; taken as its final answer');
  });

  describe('when a budget is spent', () => {
    it('stops after agent.maxTurns model calls with agent-turn-budget', async () => {
      const s = await serve('budgets');
      const result = await agent(s.baseUrl, { maxTurns: 3 }).run(await input('Never finish.\n'));
      expect(s.requests).toHaveLength(3);
      expect(result.failure).toEqual({ reason: 'agent-turn-budget', message: 'the agent used all 3 turns (agent.maxTurns) without calling finish' });
    });

    it('stops once the tokens reach agent.maxTokens with agent-token-budget', async () => {
      const s = await serve('budgets');
      const result = await agent(s.baseUrl, { maxTokens: 650 }).run(await input('Never finish.\n'));
      expect(s.requests).toHaveLength(2);
      expect(result.failure).toMatchObject({ reason: 'agent-token-budget' });
    });

    it('keeps the usage and the transcript of a program stopped in the middle of a command (it hears the TERM and says so)', async () => {
      const model = await startToolScriptServer([{ name: 'run_command', args: { command: 'sleep 30' } }]);
      try {
        const stop = new AbortController();
        void model.handedOut(0).then(() => setTimeout(() => stop.abort(), 500));
        const result = await agent(model.baseUrl, { model: 'scripted', price: null }).run(await input('Sleep.\n', {}, { signal: stop.signal }));
        expect(result).toMatchObject({ aborted: true, exitCode: 137 });
        expect(result.usage).toEqual({ inputTokens: 100, outputTokens: 10, cachedTokens: null, costUsd: null });
        expect(JSON.parse(result.transcript!).end.outcome).toBe('stopped');
      } finally {
        await model.close();
      }
    });

    it('stops at the wall time as timed out', async () => {
      const s = await serve('rate-limit');
      const result = await agent(s.baseUrl).run(await input('Mind the rate limit.\n', {}, { timeoutMs: 300 }));
      expect(result).toMatchObject({ timedOut: true, exitCode: 137 });
      expect(result.failure).toBeUndefined();
    });
  });

  it('opens the circuit on credentials the endpoint refuses', async () => {
    const s = await serve('budgets');
    const error = await agent(s.baseUrl)
      .run(await input('Bad key.\n'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisError);
    expect(error).toMatchObject({ code: 'agent-auth-failed', retryable: false });
    expect((error as Error).message).toContain('Incorrect API key provided');
  });

  it('opens the circuit when the endpoint cannot be reached at all', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await agent(`http://127.0.0.1:${port}/v1`, { maxRetries: 1 })
      .run(await input('anything\n'))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-endpoint-unreachable', retryable: false });
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });
});
