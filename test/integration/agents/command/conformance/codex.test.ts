import { afterEach, describe, expect } from 'vitest';
import { costOf } from '../../../../../src/agents/usage/usage.js';
import { DEFAULT_PRICES } from '../../../../../src/agents/usage/prices.js';
import { startResponsesServer } from '../../../../helpers/model-servers/openai-responses.js';
import { requestText, type ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { GOOD_A } from '../../../../helpers/world-fixture.js';
import { expectThroughGateway, PROMPT_MARKER, runCliWorld, sentTotals } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Codex at its pinned version, through Genesis, in the default sandbox', () => {
  itWith('bwrap')('reaches agent.baseUrl through its provider entry and lands its tool call, priced from the table', { timeout: 600_000 }, async () => {
    server = await startResponsesServer();
    const run = await runCliWorld('codex', server, { baseUrl: `${server.origin}/v1`, model: 'gpt-5-codex' });

    expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
    expectThroughGateway(run, server);
    expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
    expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual(server.sent.map(() => '/v1/responses'));
    expect(requestText(server)).toContain(PROMPT_MARKER);
    const totals = sentTotals(server);
    expect(run.episodes[0]!.usage).toEqual({ ...totals, cachedTokens: 0, costUsd: costOf({ ...totals, cachedTokens: 0 }, DEFAULT_PRICES['gpt-5-codex']!) });
  });

  itWith('bwrap')(
    'lands its change after its shell tool printed an honest build log of megabytes, which Codex prints whole',
    { timeout: 600_000 },
    async () => {
      server = await startResponsesServer();
      // A build printing about 4 MB, then the module: Codex prints each event, the command's output
      // in it, to the output Genesis reads, which stays blocking however slowly Genesis drains it.
      const build = `node -e "for (let i = 0; i < 60000; i++) console.log('compiling module ' + i + ' of the build, a line of some width')"`;
      server.command = `${build} && mkdir -p src && echo ${Buffer.from(GOOD_A).toString('base64')} | base64 -d > src/a.js`;
      const run = await runCliWorld('codex', server, { baseUrl: `${server.origin}/v1`, model: 'gpt-5-codex' });

      expect(run.episodes[0], run.agentLogs[0]?.slice(-2000)).toMatchObject({ outcome: 'accepted' });
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(run.agentLogs[0]).toContain('compiling module 59999 of the build');
      expect(run.agentLogs[0]).not.toContain('failed printing to stdout');
    },
  );
});
