import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Notifier, outboxDir } from '../../../src/notify/notifier.js';
import { signBody } from '../../../src/notify/webhook-request.js';
import { backoffPolicy } from '../../../src/retry/backoff-policy.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';

const ALL = ['accepted', 'rejected', 'blocked', 'awaiting-review', 'budget-spent', 'stopped', 'worker-lost'] as const;
const accepted: RunEvent = {
  type: 'episode-end',
  id: 'ep1',
  task: 'a',
  attempt: 1,
  outcome: 'accepted',
  reason: null,
  message: null,
  commit: 'c0ffee',
  durationMs: 5,
};
const stop: RunEvent = { type: 'stop', reason: { kind: 'done' } };
const fast = backoffPolicy({ initialMs: 50, maxMs: 200 });
const receivers: WebhookReceiver[] = [];
const notifiers: Notifier[] = [];

afterEach(async () => {
  for (const n of notifiers.splice(0)) n.close();
  for (const r of receivers.splice(0)) await r.down();
});

async function receiver(down = false): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start({ down });
  receivers.push(r);
  return r;
}

async function notifier(options: Omit<Parameters<typeof Notifier.open>[0], 'world'>): Promise<Notifier> {
  const n = await Notifier.open({ world: 'w', backoff: fast, ...options });
  notifiers.push(n);
  return n;
}

const owedFiles = async (scratch: string) => (await readdir(outboxDir(scratch)).catch(() => [])).filter((f) => f.endsWith('.json'));

describe('the notifier', () => {
  it('POSTs each event a webhook asks for as JSON, signed with the secret its variable holds', async () => {
    const r = await receiver();
    const scratch = await tempDir('genesis-notify-');
    const n = await notifier({
      scratchDir: scratch,
      hooks: [{ urlEnv: 'HOOK_URL', events: ['accepted'], format: 'json', secretEnv: 'HOOK_SECRET' }],
      env: { HOOK_URL: r.url, HOOK_SECRET: 's3cret' },
    });
    n.notify(accepted);
    n.notify(stop); // not asked for
    expect(await n.flush()).toBe(0);
    expect(r.received).toHaveLength(1);
    const [hook] = r.received;
    expect(hook!.headers['content-type']).toBe('application/json');
    expect(hook!.headers['x-genesis-event']).toBe('accepted');
    expect(hook!.headers['x-genesis-signature']).toBe(signBody(hook!.body, 's3cret'));
    expect(JSON.parse(hook!.body)).toMatchObject({ event: 'accepted', world: 'w', task: 'a', commit: 'c0ffee', delivery: hook!.headers['x-genesis-delivery'] });
    expect(await owedFiles(scratch)).toEqual([]);
  });

  it('sends the Slack-compatible payload to a slack webhook', async () => {
    const r = await receiver();
    const n = await notifier({
      scratchDir: await tempDir('genesis-notify-'),
      hooks: [{ urlEnv: 'HOOK_URL', events: [...ALL], format: 'slack' }],
      env: { HOOK_URL: r.url },
    });
    n.notify(stop);
    await n.flush();
    expect(JSON.parse(r.received[0]!.body)).toEqual({ text: 'w: the run stopped: every task is done' });
    expect(r.received[0]!.headers).not.toHaveProperty('x-genesis-signature');
  });

  it('keeps retrying with backoff while the receiver is down or failing, and delivers once it is back', async () => {
    const r = await receiver(true);
    const scratch = await tempDir('genesis-notify-');
    const failures: number[] = [];
    const n = await notifier({
      scratchDir: scratch,
      hooks: [{ urlEnv: 'HOOK_URL', events: [...ALL], format: 'json' }],
      env: { HOOK_URL: r.url },
      onEvent: (e) => e.type === 'delivery-failed' && failures.push(e.retryInMs),
    });
    n.notify(accepted);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures.slice(0, 3)).toEqual([50, 100, 200].slice(0, Math.min(3, failures.length)));
    expect(await owedFiles(scratch)).toHaveLength(1);
    r.status = 503;
    await r.up();
    await r.waitFor(1);
    r.status = 200;
    const [delivered] = await r.waitFor(2);
    expect(r.received[1]!.headers['x-genesis-delivery']).toBe(delivered!.headers['x-genesis-delivery']);
    await n.flush();
    expect(await owedFiles(scratch)).toEqual([]);
  });

  it('leaves what it could not deliver in the outbox, and the next notifier on the world delivers it first', async () => {
    const r = await receiver(true);
    const scratch = await tempDir('genesis-notify-');
    const hooks = [{ urlEnv: 'HOOK_URL', events: [...ALL], format: 'json' as const, secretEnv: 'HOOK_SECRET' }];
    const first = await notifier({ scratchDir: scratch, hooks, env: { HOOK_URL: r.url, HOOK_SECRET: 'k' } });
    first.notify(accepted);
    first.notify(stop);
    expect(await first.flush()).toBe(2);
    first.close();
    expect(await owedFiles(scratch)).toHaveLength(2);
    // The outbox holds where the URL and the secret are, never what they are.
    for (const file of await owedFiles(scratch)) expect(await readFile(join(outboxDir(scratch), file), 'utf8')).not.toContain(r.url);

    await r.up();
    // A later genesis without the secret does not send them unsigned: they wait.
    const unsigned: string[] = [];
    const without = await notifier({
      scratchDir: scratch,
      hooks,
      env: { HOOK_URL: r.url },
      onEvent: (e) => e.type === 'secret-missing' && unsigned.push(e.why),
    });
    expect(await without.flush()).toBe(2);
    without.close();
    expect(unsigned).toEqual(['$HOOK_SECRET is not set']);
    expect(r.received).toHaveLength(0);
    expect(await owedFiles(scratch)).toHaveLength(2);

    const second = await notifier({ scratchDir: scratch, hooks, env: { HOOK_URL: r.url, HOOK_SECRET: 'k' } });
    await r.waitFor(2);
    expect(r.received.map((h) => JSON.parse(h.body).event)).toEqual(['accepted', 'stopped']);
    for (const h of r.received) expect(h.headers['x-genesis-signature']).toBe(signBody(h.body, 'k'));
    expect(await second.flush()).toBe(0);
    expect(await owedFiles(scratch)).toEqual([]);
  });

  it('gives a delivery up after its retries, saying so', async () => {
    const r = await receiver(true);
    const scratch = await tempDir('genesis-notify-');
    const gaveUp: string[] = [];
    const n = await notifier({
      scratchDir: scratch,
      backoff: backoffPolicy({ initialMs: 10, maxMs: 10, maxRetries: 2 }),
      hooks: [{ urlEnv: 'HOOK_URL', events: [...ALL], format: 'json' }],
      env: { HOOK_URL: r.url },
      onEvent: (e) => e.type === 'gave-up' && gaveUp.push(e.error),
    });
    n.notify(accepted);
    const until = Date.now() + 5_000;
    while (gaveUp.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gaveUp).toEqual(['ECONNREFUSED']);
    expect(await owedFiles(scratch)).toEqual([]);
  });

  it('reads a URL from a file outside the world, and refuses one inside it or one that is not a regular file, without blocking', async () => {
    const r = await receiver();
    const root = await tempDir('genesis-notify-');
    const worldDir = join(root, 'w.world');
    await mkdir(worldDir);
    const outside = join(root, 'hook-url');
    await writeFile(outside, `${r.url}\n`);
    const inside = join(worldDir, 'hook-url');
    await writeFile(inside, `${r.url}\n`);
    // A FIFO nobody writes to: opened as a file it would block Genesis for good.
    const fifo = join(root, 'hook-fifo');
    execFileSync('/usr/bin/mkfifo', [fifo]);
    const why: string[] = [];
    const n = await notifier({
      scratchDir: join(root, 'scratch'),
      worldDir,
      hooks: [outside, inside, fifo].map((urlFile) => ({ urlFile, events: ['accepted' as const], format: 'json' as const })),
      env: {},
      onEvent: (e) => e.type === 'secret-missing' && why.push(e.why),
    });
    n.notify(accepted);
    expect(await n.flush()).toBe(2);
    expect(r.received).toHaveLength(1);
    expect(why.sort()).toEqual([`${fifo} is not a regular file`, `${inside} is inside the world, where agents reach it`]);
  });
});
