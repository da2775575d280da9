import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect } from 'vitest';
import { ModelGateway } from '../../../src/channel/model-gateway.js';
import { RedisModelHolds } from '../../../src/queue/redis/model-holds.js';
import { startAnthropicServer } from '../../helpers/model-servers/anthropic-messages.js';
import type { ScriptedServer } from '../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../helpers/services.js';
import { testRedis } from './redis-test-world.js';

const it = itWith('redis');
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('usage-limit holds shared by a fleet', () => {
  it("holds a second worker's episodes on the credential the first one's episode found limited, and no other credential", async () => {
    server = await startAnthropicServer({ mode: 'usage-limit' });
    server.resetAfterSec = 90;
    const redis = await testRedis();
    // Two workers: two processes' gateways, one Redis.
    const [first, second] = [new ModelGateway(), new ModelGateway()];
    first.shareHolds(new RedisModelHolds(redis));
    second.shareHolds(new RedisModelHolds(redis));
    const key = `sk-fleet-${randomBytes(8).toString('hex')}`;
    const channel = await first.open({
      label: 'worker-1',
      upstream: new URL(server.origin),
      credentials: { ANTHROPIC_API_KEY: key },
      stallMs: 30_000,
      priceOf: () => null,
      onFailure: () => undefined,
    });
    const refused = await fetch(`http://127.0.0.1:${channel.port}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': channel.env.ANTHROPIC_API_KEY!, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBe(429);
    channel.close();
    // Written to Redis as the 429 is read, before the episode ends.
    await expect.poll(() => second.heldFor({ ANTHROPIC_API_KEY: key }), { timeout: 5_000 }).toMatchObject({ untilMs: expect.any(Number) });
    const held = await second.heldFor({ ANTHROPIC_API_KEY: key });
    expect(held!.untilMs).toBeGreaterThan(Date.now() + 80_000);
    expect(held!.message).toContain('429');
    expect(await second.heldFor({ ANTHROPIC_API_KEY: `${key}-other` })).toBeNull();
    expect(server.requests).toHaveLength(1);
    first.close();
    second.close();
  });
});
