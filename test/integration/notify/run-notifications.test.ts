import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect } from 'vitest';
import { outboxDir } from '../../../src/notify/notifier.js';
import { signBody } from '../../../src/notify/webhook-request.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

let receiver: WebhookReceiver | null = null;
afterEach(async () => {
  await receiver?.down();
});

describe('genesis run tells its webhooks', () => {
  itWith('bwrap')('what happened while the receiver was down, once it is back, by the next genesis run', async () => {
    receiver = await WebhookReceiver.start({ down: true });
    const webhooks = [{ urlEnv: 'HOOK_URL', events: ['accepted', 'blocked', 'awaiting-review', 'stopped'], secretEnv: 'HOOK_SECRET' }];
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ notify: { webhooks } }),
      recording: { a: [{ write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const env = { HOOK_URL: receiver.url, HOOK_SECRET: 'hook-secret' };
    const first = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap'], { env });
    expect(first.status, first.stdout + first.stderr).toBe(3);
    expect(first.stderr).toContain('did not take');
    expect(first.stderr).toContain('3 notification(s) not delivered yet');
    expect((await readdir(outboxDir(f.world.scratchDir))).filter((n) => n.endsWith('.json'))).toHaveLength(3);

    await receiver.up();
    const second = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap'], { env });
    expect(second.status, second.stdout + second.stderr).toBe(3);
    const received = await receiver.waitFor(4);
    const bodies = received.map((h) => JSON.parse(h.body));
    const events = bodies.map((b) => [b.event, b.task ?? null]);
    // a and b run side by side, so which ended first is the machine's to say; each run's stop comes after them.
    expect(events.slice(0, 2)).toEqual(
      expect.arrayContaining([
        ['accepted', 'b'],
        ['blocked', 'a'],
      ]),
    );
    expect(events.slice(2)).toEqual([
      ['stopped', null],
      ['stopped', null],
    ]);
    for (const h of received) expect(h.headers['x-genesis-signature']).toBe(signBody(h.body, 'hook-secret'));
    expect(new Set(received.map((h) => h.headers['x-genesis-delivery'])).size).toBe(4);
    expect((await readdir(outboxDir(f.world.scratchDir))).filter((n) => n.endsWith('.json'))).toEqual([]);
  });

  itWith('bwrap')('that a budget is spent, with what was used of it, then that the run stopped', async () => {
    receiver = await WebhookReceiver.start();
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({
        goal: { outcome: 'modules a and b exist', stop: { maxEpisodes: 1 } },
        parallelism: 1,
        notify: { webhooks: [{ urlEnv: 'HOOK_URL', events: ['budget-spent', 'stopped'] }] },
      }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const run = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap'], { env: { HOOK_URL: receiver.url } });
    expect(run.stdout + run.stderr).toMatch(/budget/);
    const bodies = (await receiver.waitFor(2)).map((h) => JSON.parse(h.body));
    expect(bodies.map((b) => b.event)).toEqual(['budget-spent', 'stopped']);
    expect(bodies[0]).toMatchObject({ stop: { kind: 'budget', budget: 'maxEpisodes', limit: 1, used: 1 } });
    expect(bodies[0].text).toContain('budget maxEpisodes spent (1 of 1)');
  });
});
