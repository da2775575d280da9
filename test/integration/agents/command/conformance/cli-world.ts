import { randomBytes } from 'node:crypto';
import { runEmbedded } from '../../../../../src/compose/embedded-run.js';
import type { EpisodeRecord } from '../../../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../../../src/ledger/git-ledger.js';
import type { RunEvent, RunSummary } from '../../../../../src/schedule/run/ports/events.js';
import { installAgentCli, type AgentCliName } from '../../../../helpers/agent-clis.js';
import type { ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { startAnthropicServer } from '../../../../helpers/model-servers/anthropic-messages.js';
import { startChatCompletionsServer } from '../../../../helpers/model-servers/chat-completions.js';
import { startGeminiServer } from '../../../../helpers/model-servers/gemini-generate.js';
import { startResponsesServer } from '../../../../helpers/model-servers/openai-responses.js';
import { baseManifest, GOOD_A, makeWorld, type FixtureWorld } from '../../../../helpers/world-fixture.js';
import { expect } from 'vitest';

/** Each CLI's key variable, set to a made-up key: the scripted server takes any. */
export const KEY_ENV: Readonly<Record<AgentCliName, string>> = {
  'claude-code': 'ANTHROPIC_API_KEY',
  codex: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  opencode: 'OPENAI_API_KEY',
  copilot: 'COPILOT_PROVIDER_API_KEY',
  'qwen-code': 'OPENAI_API_KEY',
};

/**
 * Each pinned CLI with the scripted server of the API it speaks through its preset, the path of
 * `agent.baseUrl` on that server (`/v1` for an OpenAI-compatible root), and the model it is given.
 */
export const CLI_SERVERS: ReadonlyArray<{ cli: AgentCliName; start: typeof startAnthropicServer; root: string; model: string }> = [
  { cli: 'claude-code', start: startAnthropicServer, root: '', model: 'claude-sonnet-4-5' },
  { cli: 'codex', start: startResponsesServer, root: '/v1', model: 'gpt-5-codex' },
  { cli: 'gemini', start: startGeminiServer, root: '', model: 'gemini-2.5-pro' },
  { cli: 'opencode', start: startChatCompletionsServer, root: '/v1', model: 'my-model' },
  { cli: 'copilot', start: startChatCompletionsServer, root: '/v1', model: 'my-model' },
  { cli: 'qwen-code', start: startChatCompletionsServer, root: '/v1', model: 'my-model' },
];

/** What the key set on this host starts with: the scripted server must see it, the agent never. */
export const SCRIPTED_KEY = 'sk-scripted-test-key';

/**
 * The CLI went through the model gateway: every model call reached the server with the real key
 * (and no stand-in), the agent's own output never shows the key, and the ledger's usage is the
 * gateway's measurement of those calls.
 */
export function expectThroughGateway(run: CliWorldRun, server: ScriptedServer): void {
  const calls = server.requests.filter((r) => r.method === 'POST');
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    const sent = JSON.stringify(call.headers) + call.url;
    expect(sent).toContain(SCRIPTED_KEY);
    expect(sent).not.toContain('genesis-stand-in-');
  }
  for (const log of run.agentLogs) expect(log).not.toContain(SCRIPTED_KEY);
  const episode = run.episodes.at(-1)!;
  expect(episode.usageSource).toBe('wire');
  expect(episode.modelCalls).toBe(calls.length);
}

/** A marker in the task's description: found in the server's request log, the prompt reached the model. */
export const PROMPT_MARKER = 'conformance-marker-7f3a';

export interface CliWorldRun {
  world: FixtureWorld;
  summary: RunSummary;
  events: RunEvent[];
  episodes: EpisodeRecord[];
  agentLogs: string[];
  /** Each episode's conversation as the gateway recorded it (JSON), or '' when none was kept. */
  transcripts: string[];
}

/**
 * One world of one task (write src/a.js) driven by the real, pinned CLI through Genesis: its
 * manifest names only the preset, `agent.baseUrl` (the scripted server on this host's loopback)
 * and the model, in the default confined sandbox.
 */
export async function runCliWorld(
  cli: AgentCliName,
  server: ScriptedServer,
  agent: Record<string, unknown>,
  more: Record<string, unknown> = {},
  /** Ends the run at the first event it accepts (a hold whose reset the CLI does not say lasts minutes). */
  stopAt?: (event: RunEvent) => boolean,
): Promise<CliWorldRun> {
  const installed = await installAgentCli(cli);
  server.file.path = 'src/a.js';
  server.file.content = GOOD_A;
  const manifest = baseManifest({
    // No agent.network: only what the documented contract writes, so every run also proves the
    // default sandbox lets the CLI reach the baseUrl on this host's loopback with nothing else said.
    agent: { kind: 'command', preset: cli, timeoutSec: 300, ...agent },
    retry: { maxAttempts: 2 },
    parallelism: 1,
    tasks: [{ id: 'a', title: 'module a', description: `Write src/a.js (${PROMPT_MARKER}).`, paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    ...more,
  });
  const world = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
  const saved = { PATH: process.env.PATH, key: process.env[KEY_ENV[cli]] };
  process.env.PATH = `${installed.binDir}:${process.env.PATH}`;
  // A key of its own per run: a usage limit the run before met holds every episode on that credential (as it must), not this run's.
  process.env[KEY_ENV[cli]] = `${SCRIPTED_KEY}-${randomBytes(4).toString('hex')}`;
  const events: RunEvent[] = [];
  const stop = new AbortController();
  const onEvent = (e: RunEvent) => {
    events.push(e);
    if (stopAt?.(e)) stop.abort();
  };
  try {
    const summary = await runEmbedded({ world: world.world, sandbox: world.sandbox, onEvent, signal: stop.signal });
    const ledger = ledgerOf(world.world);
    const episodes = await ledger.readAll();
    const artifacts = await Promise.all(episodes.map((e) => ledger.readArtifacts(e.id)));
    return { world, summary, events, episodes, agentLogs: artifacts.map((a) => a.agentLog ?? ''), transcripts: artifacts.map((a) => a.transcript ?? '') };
  } finally {
    process.env.PATH = saved.PATH;
    if (saved.key === undefined) delete process.env[KEY_ENV[cli]];
    else process.env[KEY_ENV[cli]] = saved.key;
  }
}

/** The usage the server reported over every model call it answered. */
export function sentTotals(server: ScriptedServer): { inputTokens: number; outputTokens: number } {
  return {
    inputTokens: server.sent.reduce((n, u) => n + u.input, 0),
    outputTokens: server.sent.reduce((n, u) => n + u.output, 0),
  };
}
