import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../../src/manifest/parse.js';

function parse(notify: unknown) {
  return parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test' }, agent: { kind: 'command', command: ['true'] }, notify }));
}

describe('notify in world.yaml', () => {
  it('takes a webhook with its events and secret, filling every event and the JSON format by default', () => {
    const { errors, manifest } = parse({
      webhooks: [
        { url: 'http://127.0.0.1:9000/hook', events: ['accepted', 'blocked', 'awaiting-review', 'stopped'], secretEnv: 'HOOK_SECRET' },
        { url: 'https://hooks.example/x' },
      ],
    });
    expect(errors).toEqual([]);
    expect(manifest!.notify.webhooks).toEqual([
      { url: 'http://127.0.0.1:9000/hook', events: ['accepted', 'blocked', 'awaiting-review', 'stopped'], secretEnv: 'HOOK_SECRET', format: 'json' },
      {
        url: 'https://hooks.example/x',
        events: ['accepted', 'rejected', 'blocked', 'awaiting-review', 'budget-spent', 'stopped', 'worker-lost', 'held'],
        format: 'json',
      },
    ]);
  });

  it('refuses an event it does not know, a URL that is not http, and a secret that is not a variable name', () => {
    expect(parse({ webhooks: [{ url: 'http://h/x', events: ['landed'] }] }).errors.join('\n')).toMatch(/notify\.webhooks\[0\]\.events\[0\]: Invalid option/);
    expect(parse({ webhooks: [{ url: 'ftp://h/x' }] }).errors.join('\n')).toMatch(/an http or https URL/);
    expect(parse({ webhooks: [{ url: 'http://h/x', secretEnv: 'not a name' }] }).errors.join('\n')).toMatch(/the name of an environment variable/);
  });
});
