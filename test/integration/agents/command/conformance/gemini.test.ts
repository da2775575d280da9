import { afterEach, describe, expect } from 'vitest';
import { startGeminiServer } from '../../../../helpers/model-servers/gemini-generate.js';
import { requestText, type ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { GOOD_A } from '../../../../helpers/world-fixture.js';
import { expectThroughGateway, PROMPT_MARKER, runCliWorld, sentTotals } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Gemini CLI at its pinned version, through Genesis, in the default sandbox', () => {
  itWith('bwrap')(
    'works in the fresh workspace with the API-key settings, lands its write_file call, priced by agent.price',
    { timeout: 600_000 },
    async () => {
      server = await startGeminiServer();
      const price = { inputPerMTok: 2, outputPerMTok: 20 };
      const run = await runCliWorld('gemini', server, { baseUrl: server.origin, model: 'gemini-2.5-pro', price });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expectThroughGateway(run, server);
      expectThroughGateway(run, server);
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(server.requests.some((r) => r.url.startsWith('/v1beta/models/gemini-2.5-pro:streamGenerateContent'))).toBe(true);
      expect(requestText(server)).toContain(PROMPT_MARKER);
      const totals = sentTotals(server);
      const cost = Math.round(totals.inputTokens * 2 + totals.outputTokens * 20) / 1e6;
      expect(run.episodes[0]!.usage).toEqual({ ...totals, cachedTokens: 0, costUsd: cost });
    },
  );
});
