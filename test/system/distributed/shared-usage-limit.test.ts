import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { startChatCompletionsServer } from '../../helpers/model-servers/chat-completions.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

const REDIS = 'redis://127.0.0.1:6379';
/** Seconds until the limit the server answers with resets. */
const RESET_SEC = 12;

/** An agent that makes one model call through the gateway with the key it holds (a stand-in), and writes its module once answered. */
const AGENT = `
const res = await fetch(process.env.GENESIS_MODEL_URL + '/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.FLEET_API_KEY },
  body: JSON.stringify({ model: 'fleet-model', messages: [{ role: 'user', content: 'write module a' }] }),
});
await res.text();
if (!res.ok) process.exit(1);
(await import('node:fs')).mkdirSync('src', { recursive: true });
(await import('node:fs')).writeFileSync('src/a.js', ${JSON.stringify(GOOD_A)});
`;

const fleetWorld = (baseUrl: string) =>
  makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({
      agent: { kind: 'command', command: ['node', 'agent.mjs'], baseUrl, env: ['FLEET_API_KEY'], timeoutSec: 60 },
      retry: { maxAttempts: 1 },
      parallelism: 1,
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    }),
    files: { 'agent.mjs': AGENT },
    recording: {},
  });

/**
 * Two fleets on one Redis, each a scheduler and a `genesis worker` process of its own queue
 * namespace, whose agents use the same credential. The first fleet's episode meets a usage limit;
 * the second fleet's episode, started on the other worker while it holds, is held from Redis
 * without calling the model, and both worlds resume by themselves once it resets, uncharged.
 */
describe('a usage limit one worker meets, in a fleet on one Redis', () => {
  itWith('redis')(
    "holds another worker's episode on the same credential without a model call until the reset, and both resume by themselves, uncharged",
    async () => {
      const server = await startChatCompletionsServer();
      server.resetAfterSec = RESET_SEC;
      server.script = [{ mode: 'usage-limit', count: 1 }];
      const [x, y] = [await fleetWorld(`${server.origin}/v1`), await fleetWorld(`${server.origin}/v1`)];
      // A key of this test's own: a hold on it is this test's alone.
      const key = { FLEET_API_KEY: `sk-fleet-${randomBytes(6).toString('hex')}` };
      const fleets = [`test-${randomUUID()}`, `test-${randomUUID()}`].map((prefix) => ({ GENESIS_QUEUE_PREFIX: prefix, ...key }));
      const workers = fleets.map((env) => startCli(['worker', '--redis', REDIS, '--json'], env));
      try {
        await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/)));
        const first = startCli(['run', '--world', x.world.path, '--redis', REDIS, '--json'], fleets[0]);
        const held = JSON.parse(await first.waitFor(/"type":"hold"/, 120_000)) as { untilMs: number; message: string };
        expect(held.message).toContain('429');
        const calledBefore = server.requests.filter((r) => r.method === 'POST').length;
        expect(calledBefore).toBe(1);

        const second = startCli(['run', '--world', y.world.path, '--redis', REDIS, '--json'], fleets[1]);
        const heldToo = JSON.parse(await second.waitFor(/"type":"hold"/, 120_000)) as { untilMs: number };
        // Held from Redis, to the same reset, and the model was not called for it.
        expect(Math.abs(heldToo.untilMs - held.untilMs)).toBeLessThan(1000);
        expect(server.requests.filter((r) => r.method === 'POST').length).toBe(calledBefore);

        expect(await first.exited, first.stderr()).toBe(0);
        expect(await second.exited, second.stderr()).toBe(0);
        for (const w of [x, y]) {
          const episodes = await new GitLedger(w.world.path).readAll();
          expect(episodes.map((e) => [e.outcome, e.reason, e.attempt])).toEqual([
            ['abandoned', 'agent-usage-limit', 1],
            ['accepted', null, 1],
          ]);
          // Neither resumed before the reset.
          expect(Date.parse(episodes[1]!.startedAt)).toBeGreaterThanOrEqual(held.untilMs - 1000);
          expect(await w.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
        }
        const second0 = (await new GitLedger(y.world.path).readAll())[0]!;
        expect(second0.modelCalls ?? 0).toBe(0);
        // The first call was refused; each world's retry after the reset was answered.
        expect(server.requests.filter((r) => r.method === 'POST').length).toBe(3);
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.exited));
        await server.close();
      }
    },
    300_000,
  );
});
