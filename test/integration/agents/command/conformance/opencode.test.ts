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

describe('opencode at its pinned version, through Genesis, in the default sandbox', () => {
  itWith('bwrap')(
    'reaches agent.baseUrl through the provider in its HOME config and lands its write call; every model call is counted',
    { timeout: 600_000 },
    async () => {
      server = await startChatCompletionsServer();
      const run = await runCliWorld('opencode', server, { baseUrl: `${server.origin}/v1`, model: 'my-model' });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expectThroughGateway(run, server);
      expectThroughGateway(run, server);
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(requestText(server)).toContain(PROMPT_MARKER);
      // No model call of opencode's own (a title) goes uncounted: every call the server answered is in the usage.
      expect(server.sent.every((u) => u.turn)).toBe(true);
      // opencode prints "cost":0 for a model it has no price of: unknown, not free.
      expect(run.agentLogs[0]).toContain('"cost":0');
      expect(run.episodes[0]!.usage).toEqual({ ...sentTotals(server), cachedTokens: 0, costUsd: null });
    },
  );
});
