import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../src/manifest/parse.js';
import { redactUrl } from '../../../src/git/redact-url.js';
import { isGitUrl } from '../../../src/world/worker-world.js';

const manifest = (publish: string) => `
name: w
goal: { outcome: x }
verify: { test: "true" }
agent: { kind: script, script: r.yaml }
${publish}
`;

describe('publish: in world.yaml', () => {
  it('takes one remote or a list, the ledger off unless asked for', () => {
    expect(parseManifest(manifest('publish: { url: "git@github.com:me/w.git" }')).manifest?.publish).toEqual([
      { url: 'git@github.com:me/w.git', ledger: false },
    ]);
    const two = parseManifest(manifest('publish: [{ url: /srv/a.git, ledger: true }, { url: "https://forge/b.git" }]')).manifest?.publish;
    expect(two).toEqual([
      { url: '/srv/a.git', ledger: true },
      { url: 'https://forge/b.git', ledger: false },
    ]);
    expect(parseManifest(manifest('')).manifest?.publish).toBeUndefined();
  });

  it('names the field of a bad entry', () => {
    const { manifest: m, errors } = parseManifest(manifest('publish: { url: "", mirror: yes }'));
    expect(m).toBeNull();
    expect(errors.join('\n')).toMatch(/publish/);
  });
});

describe('URLs of worlds', () => {
  it('hides a password or token before printing', () => {
    expect(redactUrl('https://bob:s3cret@forge.example/w.git')).toBe('https://bob:***@forge.example/w.git');
    expect(redactUrl('https://ghp_token@forge.example/w.git')).toBe('https://***@forge.example/w.git');
    expect(redactUrl('ssh://git@forge.example/w.git')).toBe('ssh://***@forge.example/w.git');
    expect(redactUrl('/srv/worlds/w.git')).toBe('/srv/worlds/w.git');
  });

  it('tells git URLs from paths', () => {
    for (const url of ['file:///srv/w.git', 'ssh://host/w.git', 'https://forge/w.git', 'git@forge:me/w.git']) expect(isGitUrl(url)).toBe(true);
    for (const path of ['/srv/w.world', 'worlds/w.world', './w.world']) expect(isGitUrl(path)).toBe(false);
  });
});
