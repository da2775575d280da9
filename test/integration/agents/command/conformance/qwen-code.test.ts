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

describe('Qwen Code at its pinned version, through Genesis, in the default sandbox', () => {
  itWith('bwrap')(
    'reaches agent.baseUrl through OPENAI_BASE_URL and lands its write_file call; every model call is counted, none spent on memory',
    { timeout: 600_000 },
    async () => {
      server = await startChatCompletionsServer();
      const run = await runCliWorld('qwen-code', server, { baseUrl: `${server.origin}/v1`, model: 'my-model' });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expectThroughGateway(run, server);
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(requestText(server)).toContain(PROMPT_MARKER);
      // Its background memory extraction is off: no call asks the model to write memories.
      expect(requestText(server)).not.toContain('memory extraction');
      expect(run.episodes[0]!.usage).toEqual({ ...sentTotals(server), cachedTokens: 0, costUsd: null });
    },
  );
});
