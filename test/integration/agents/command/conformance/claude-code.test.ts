import { afterEach, describe, expect } from 'vitest';
import { startAnthropicServer } from '../../../../helpers/model-servers/anthropic-messages.js';
import { requestText, type ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { makeTestCa } from '../../../../helpers/test-ca.js';
import { GOOD_A } from '../../../../helpers/world-fixture.js';
import { expectThroughGateway, PROMPT_MARKER, runCliWorld, sentTotals } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Claude Code at its pinned version, through Genesis, in the default sandbox', () => {
  itWith('bwrap')('lands its Write tool call, with the usage the server sent and the cost Claude Code printed', { timeout: 600_000 }, async () => {
    server = await startAnthropicServer();
    const run = await runCliWorld('claude-code', server, { baseUrl: server.origin, model: 'claude-sonnet-4-5' });

    expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
    expectThroughGateway(run, server);
    expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
    expect(server.requests.some((r) => r.url.startsWith('/v1/messages'))).toBe(true);
    expect(requestText(server)).toContain(PROMPT_MARKER);
    const [episode] = run.episodes;
    const result = run.agentLogs[0]!.split('\n').find((l) => l.startsWith('{"') && l.includes('"type":"result"'));
    const printed = JSON.parse(result!) as { total_cost_usd: number };
    expect(episode!.usage).toEqual({ ...sentTotals(server), cachedTokens: 0, costUsd: printed.total_cost_usd });
    expect(printed.total_cost_usd).toBeGreaterThan(0);
  });
  itWith('bwrap')('reaches a vendor over TLS through the gateway, whose certificate authority GENESIS_MODEL_CA names', { timeout: 600_000 }, async () => {
    const ca = await makeTestCa();
    server = await startAnthropicServer({ tls: { key: ca.key, cert: ca.cert } });
    process.env.GENESIS_MODEL_CA = ca.caFile;
    try {
      const run = await runCliWorld('claude-code', server, { baseUrl: server.origin, model: 'claude-sonnet-4-5' });

      expect(server.origin).toMatch(/^https:\/\/127\.0\.0\.1:/);
      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expectThroughGateway(run, server);
      expect(run.episodes[0]!.usage).toMatchObject(sentTotals(server));
    } finally {
      delete process.env.GENESIS_MODEL_CA;
    }
  });
});
