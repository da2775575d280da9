import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../../src/manifest/parse.js';
import { secretShapeOf } from '../../../src/manifest/secret-shapes.js';

const base = { name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test' }, agent: { kind: 'command', command: ['true'] } };
const parse = (overrides: Record<string, unknown>, taskFiles: Array<{ path: string; text: string }> = []) =>
  parseManifest(stringify({ ...base, ...overrides }), taskFiles);

// Built at run time, so this file holds no string a secret scanner would flag.
const OPENAI_KEY = ['sk', 'proj', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4'].join('-');
const GITHUB_TOKEN = `ghp_${'a1B2'.repeat(9)}`;

describe('a secret written in world.yaml', () => {
  it('is refused wherever it is written, naming the field and how to pass it instead', () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ publish: { url: `https://genesis:${GITHUB_TOKEN}@github.com/o/r.git` } }, 'publish.url', /a URL with a password in it/],
      [{ agent: { kind: 'openai', model: 'm', baseUrl: 'https://models.example/v1?api_key=abcdef123456' } }, 'agent.baseUrl', /a credential in its query/],
      [{ verify: { test: `curl -H "Authorization: Bearer ${'x'.repeat(32)}" http://h && npm test` } }, 'verify.test', /bearer credential/],
      [{ agent: { kind: 'command', command: ['my-agent', '--key', OPENAI_KEY] } }, 'agent.command[2]', /OpenAI or Anthropic key/],
      [{ tasks: [{ id: 't', title: 'x', description: `use ${GITHUB_TOKEN} to push`, paths: ['src/**'] }] }, 'tasks[0].description', /GitHub token/],
      [{ goal: { outcome: 'tell https://hooks.slack.com/services/T000/B000/XXXXXXXX when done' } }, 'goal.outcome', /Slack webhook URL/],
      [{ agent: { kind: 'openai', model: 'm', apiKey: 'anything' } }, 'agent.apiKey', /apiKeyEnv: NAME/],
    ];
    for (const [overrides, field, shape] of cases) {
      const { manifest, errors } = parse(overrides);
      expect(manifest, field).toBeNull();
      expect(errors, field).toHaveLength(1);
      expect(errors[0]!.startsWith(`${field}: `), errors[0]).toBe(true);
      expect(errors[0]).toMatch(shape);
      expect(errors[0]).toMatch(/by reference|Env: NAME/);
    }
  });

  it('is refused in a tasks file too', () => {
    const { errors } = parse({}, [{ path: 'tasks/a.yaml', text: stringify({ tasks: [{ id: 'a', title: `token ${GITHUB_TOKEN}`, paths: ['a'] }] }) }]);
    expect(errors).toEqual([expect.stringMatching(/^tasks\[0\]\.title: looks like a secret \(GitHub token\)/)]);
  });

  it('may not be handed to the agents through agent.env either', () => {
    const { errors } = parse({ agent: { kind: 'command', command: ['true'], env: ['HOOK_URL'] }, notify: { webhooks: [{ urlEnv: 'HOOK_URL' }] } });
    expect(errors).toEqual([expect.stringMatching(/^agent\.env: lists HOOK_URL, which holds a webhook's URL or secret/)]);
  });

  it('is told from what is no secret: references, local endpoints, remotes without a password', () => {
    for (const value of [
      'OPENAI_API_KEY',
      'http://127.0.0.1:8080/v1',
      'https://github.com/o/r.git',
      'ssh://git@github.com:22/o/r.git',
      'git@github.com:o/r.git',
      'node --test test/a.test.js',
      'https://example.com/search?q=token&page=2',
      'see the sk- prefix',
    ]) {
      expect(secretShapeOf(value), value).toBeNull();
    }
    expect(parse({ publish: { url: 'https://github.com/o/r.git' }, notify: { webhooks: [{ urlEnv: 'HOOK_URL', secretEnv: 'HOOK_SECRET' }] } }).errors).toEqual(
      [],
    );
  });

  it('is looked for in linear time, over a long value built to make a pattern backtrack', () => {
    const started = performance.now();
    for (const bait of ['a://'.repeat(50_000), `x://${':'.repeat(100_000)}`, `?${'token'.repeat(20_000)}`, `Bearer ${' '.repeat(100_000)}`])
      secretShapeOf(bait);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
