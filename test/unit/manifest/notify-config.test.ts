import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { stringify } from 'yaml';
import { parseManifest } from '../../../src/manifest/parse.js';

function parse(notify: unknown) {
  return parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test' }, agent: { kind: 'command', command: ['true'] }, notify }));
}

describe('notify in world.yaml', () => {
  it('takes a webhook by reference with its events and secret, filling every event and the JSON format by default', () => {
    const { errors, manifest } = parse({
      webhooks: [
        { urlEnv: 'HOOK_URL', events: ['accepted', 'blocked', 'awaiting-review', 'stopped'], secretEnv: 'HOOK_SECRET' },
        { urlFile: '/etc/genesis/slack-url', secretFile: '/etc/genesis/slack-secret' },
      ],
    });
    expect(errors).toEqual([]);
    expect(manifest!.notify.webhooks).toEqual([
      { urlEnv: 'HOOK_URL', events: ['accepted', 'blocked', 'awaiting-review', 'stopped'], secretEnv: 'HOOK_SECRET', format: 'json' },
      {
        urlFile: '/etc/genesis/slack-url',
        secretFile: '/etc/genesis/slack-secret',
        events: ['accepted', 'rejected', 'blocked', 'awaiting-review', 'budget-spent', 'stopped', 'worker-lost', 'held'],
        format: 'json',
      },
    ]);
  });

  it('refuses an event it does not know, a reference that is not a variable name or an absolute path, and a webhook with no URL or two', () => {
    expect(parse({ webhooks: [{ urlEnv: 'U', events: ['landed'] }] }).errors.join('\n')).toMatch(/notify\.webhooks\[0\]\.events\[0\]: Invalid option/);
    expect(parse({ webhooks: [{ urlEnv: 'U', secretEnv: 'not a name' }] }).errors.join('\n')).toMatch(/the name of an environment variable/);
    expect(parse({ webhooks: [{ urlFile: 'hook-url' }] }).errors.join('\n')).toMatch(
      /notify\.webhooks\[0\]\.urlFile: an absolute path, to a file outside the world/,
    );
    expect(parse({ webhooks: [{ events: ['accepted'] }] }).errors.join('\n')).toMatch(/urlEnv \(a variable\) or urlFile/);
    expect(parse({ webhooks: [{ urlEnv: 'U', urlFile: '/u' }] }).errors.join('\n')).toMatch(/exactly one/);
  });

  it('refuses a webhook URL written in world.yaml, whatever it looks like, naming the field and how to pass it', () => {
    for (const url of ['http://127.0.0.1:9000/hook', 'https://hooks.slack.com/services/T000/B000/XXXX']) {
      const { manifest, errors } = parse({ webhooks: [{ url }] });
      expect(manifest).toBeNull();
      expect(errors).toEqual([
        expect.stringMatching(/^notify\.webhooks\[0\]\.url: a secret may not be written in world\.yaml; .*urlEnv: NAME.*urlFile: \/path/),
      ]);
    }
    expect(parse({ webhooks: [{ urlEnv: 'U', secret: 'hunter2' }] }).errors.join('\n')).toMatch(/notify\.webhooks\[0\]\.secret: .*secretEnv/);
  });

  it('reads as docs/guides/notifications.md shows it: its example is accepted, and the refusal it quotes is the one given', () => {
    const page = readFileSync(resolve(import.meta.dirname, '../../../docs/guides/notifications.md'), 'utf8');
    const example = parseYaml(/```yaml\n([\s\S]*?)```/.exec(page)![1]!) as { notify: unknown };
    expect(parse(example.notify).errors).toEqual([]);
    const quoted = /```\n(notify\.webhooks\[0\]\.url: [^\n]+)\n```/.exec(page)![1];
    expect(parse({ webhooks: [{ url: 'https://hooks.slack.com/services/T000/B000/XXXX' }] }).errors).toEqual([quoted]);
  });
});
