import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { createServerApp } from '../../../src/server/create-app.js';
import { startCli } from '../../helpers/cli-process.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

/** A port of this host's loopback where nothing listens: a local model server that is down. */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface Hold {
  untilMs: number;
  message: string;
}

describe('a world that waits for its model', () => {
  itWith('bwrap')(
    "says so on the run's output, in genesis status --json, in the dashboard's overview and to a webhook, while it waits",
    async () => {
      const port = await closedPort();
      const hook = await WebhookReceiver.start();
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          agent: { kind: 'command', command: ['node', '-e', 'process.exit(0)'], baseUrl: `http://127.0.0.1:${port}/v1`, timeoutSec: 60 },
          tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
          notify: { webhooks: [{ urlEnv: 'HOOK_URL', events: ['held'] }] },
        }),
        recording: {},
      });
      const model = `the model endpoint http://127.0.0.1:${port} does not accept connections`;
      const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], { HOOK_URL: hook.url });
      try {
        const line = await run.waitFor(/⏸ the world is held until/, 120_000);
        expect(line).toContain(model);
        expect(line).toMatch(/the world waits \d+ s for it \(time 1 in a row\) and tries again/);

        const status = JSON.parse((await genesis(['status', '--world', f.world.path, '--json'])).stdout) as { hold: Hold | null };
        expect(status.hold?.message).toContain(model);
        expect(status.hold!.untilMs).toBeGreaterThan(Date.now() - 60_000);

        const { app } = createServerApp({ world: f.world });
        const overview = (await (await app.request('/api/overview')).json()) as { hold: Hold | null; run: { state: string } };
        // The hold read while it holds: a later one (the wait grows each time) says the same of the model.
        expect(overview.hold?.message).toContain(model);

        for (let i = 0; i < 100 && hook.received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
        const held = JSON.parse(hook.received[0]!.body) as { event: string; message: string; text: string };
        expect(held).toMatchObject({ event: 'held', message: expect.stringContaining(model) });
        expect(held.text).toContain('no episode starts before');
        // Nothing was charged to the task while it waits: no attempt failed.
        expect(run.lines.join('\n')).not.toMatch(/✗/);
      } finally {
        run.child.kill('SIGINT');
        await run.exited;
        await hook.down();
      }
    },
    180_000,
  );
});
