import { afterEach, describe, expect } from 'vitest';
import { startChatCompletionsServer } from '../../../../helpers/model-servers/chat-completions.js';
import { requestText, type ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { GOOD_A } from '../../../../helpers/world-fixture.js';
import { expectThroughGateway, PROMPT_MARKER, runCliWorld, sentTotals } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('GitHub Copilot CLI at its pinned version, bringing its own model, through Genesis, in the default sandbox', () => {
  itWith('bwrap')(
    'reaches agent.baseUrl as its provider with the key of COPILOT_PROVIDER_API_KEY, lands its create call, and every model call is counted',
    { timeout: 600_000 },
    async () => {
      server = await startChatCompletionsServer();
      const run = await runCliWorld('copilot', server, { baseUrl: `${server.origin}/v1`, model: 'my-model' });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expectThroughGateway(run, server);
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(requestText(server)).toContain(PROMPT_MARKER);
      const calls = server.requests.filter((r) => r.url.endsWith('/chat/completions'));
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((r) => r.headers.authorization?.startsWith('Bearer sk-scripted-test-key'))).toBe(true);
      // Offline in its own-model mode: nothing but model calls reached the server (no model list, no token exchange).
      expect(server.requests.every((r) => r.url.endsWith('/chat/completions'))).toBe(true);
      // Its events carry no tokens: its own report is the usage file it left in its private HOME; the gateway measured the same.
      expect(run.agentLogs[0]).not.toContain('inputTokens');
      expect(run.episodes[0]!.usage).toEqual({ ...sentTotals(server), cachedTokens: 0, costUsd: null });
      expect(run.episodes[0]!.usageReported).toMatchObject(sentTotals(server));
    },
  );
});
