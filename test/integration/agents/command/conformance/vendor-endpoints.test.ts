import { afterEach, describe, expect } from 'vitest';
import type { AgentCliName } from '../../../../helpers/agent-clis.js';
import { startChatCompletionsServer } from '../../../../helpers/model-servers/chat-completions.js';
import type { ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { runCliWorld } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Each preset without `agent.baseUrl`: the model it is given, and the vendor endpoint its calls must be forwarded to. */
const VENDORS: Array<{ cli: AgentCliName; model?: string; upstream: string /** The provider's key, when not the one runCliWorld sets. */; keyEnv?: string }> = [
  { cli: 'claude-code', upstream: 'https://api.anthropic.com' },
  { cli: 'codex', upstream: 'https://api.openai.com/v1' },
  { cli: 'gemini', upstream: 'https://generativelanguage.googleapis.com' },
  { cli: 'opencode', model: 'openai/gpt-5', upstream: 'https://api.openai.com/v1' },
  { cli: 'opencode', model: 'anthropic/claude-sonnet-4-5', upstream: 'https://api.anthropic.com/v1', keyEnv: 'ANTHROPIC_API_KEY' },
  { cli: 'opencode', model: 'google/gemini-2.5-pro', upstream: 'https://generativelanguage.googleapis.com/v1beta', keyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY' },
  { cli: 'copilot', model: 'gpt-4.1', upstream: 'https://api.openai.com/v1' },
  { cli: 'qwen-code', model: 'qwen3-coder-plus', upstream: 'https://dashscope.aliyuncs.com/compatible-mode/v1' },
];

/**
 * With no `agent.baseUrl`, each real CLI still reaches its model only through the gateway, which
 * forwards to the vendor's own endpoint. This machine has no route to any vendor, so the gateway
 * finds each unreachable: its record of the call (the upstream's path, the problem) and the
 * episode's reason, naming the vendor, show the call went through it. The sandbox lets the agent
 * reach nothing else, so no call could have gone direct.
 */
describe("each preset without agent.baseUrl, through the gateway to its vendor's endpoint", () => {
  for (const { cli, model, upstream, keyEnv } of VENDORS) {
    itWith('bwrap')(
      `${cli}${model ? ` (${model})` : ''}: its model calls reach the gateway, which forwards them to ${upstream}`,
      { timeout: 600_000 },
      async () => {
        // Only the task's file comes from here: nothing is pointed at it, and nothing reaches it.
        server = await startChatCompletionsServer();
        const saved = keyEnv ? process.env[keyEnv] : undefined;
        if (keyEnv) process.env[keyEnv] = `sk-vendor-test-${keyEnv.toLowerCase()}`;
        const run = await runCliWorld(
          cli,
          server,
          { ...(model ? { model } : {}), stallSec: 20 },
          { retry: { maxAttempts: 1 } },
          (e) => e.type === 'hold',
        ).finally(() => {
          if (!keyEnv) return;
          if (saved === undefined) delete process.env[keyEnv];
          else process.env[keyEnv] = saved;
        });

        expect(server.requests).toEqual([]);
        const episode = run.episodes[0]!;
        expect(episode).toMatchObject({ outcome: 'abandoned', reason: 'model-unreachable', usageSource: 'wire' });
        expect(episode.message).toContain(`the model endpoint ${new URL(upstream).origin} cannot be reached`);
        expect(episode.modelCalls).toBeGreaterThan(0);
        const calls = (JSON.parse(run.transcripts[0]!) as { calls: Array<{ path: string; problem?: string }> }).calls;
        expect(calls.length).toBe(episode.modelCalls);
        expect(calls[0]).toMatchObject({
          problem: 'unreachable',
          path: expect.stringMatching(new RegExp(`^${new URL(upstream).pathname.replace(/\/$/, '')}/`)),
        });
        expect(run.events.find((e) => e.type === 'hold')).toMatchObject({ message: expect.stringContaining('the world waits') });
      },
    );
  }
});
