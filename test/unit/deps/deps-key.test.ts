import { describe, expect, it } from 'vitest';
import { computeDepsKey, depsFilesDigest, type DepsKeyInput } from '../../../src/deps/key.js';

const base: DepsKeyInput = {
  files: [
    { path: 'package.json', content: Buffer.from('{"dependencies":{"semver":"7.6.3"}}') },
    { path: 'package-lock.json', content: Buffer.from('{"lockfileVersion":3}') },
  ],
  install: 'npm ci --ignore-scripts',
  paths: ['node_modules'],
  environment: 'docker:sha256:abc',
};

describe('computeDepsKey', () => {
  it('is a sha256 in hex and the same for the same input', () => {
    expect(computeDepsKey(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(computeDepsKey({ ...base, files: [...base.files] })).toBe(computeDepsKey(base));
  });

  it('does not depend on the order the files are listed in, nor on how a path is spelled', () => {
    const reordered = { ...base, files: [base.files[1]!, { path: './package.json', content: base.files[0]!.content }] };
    expect(computeDepsKey(reordered)).toBe(computeDepsKey(base));
  });

  it.each([
    ['a file content', { files: [{ ...base.files[0]!, content: Buffer.from('{"dependencies":{"semver":"7.6.4"}}') }, base.files[1]!] }],
    ['a missing file', { files: [{ ...base.files[0]!, content: null }, base.files[1]!] }],
    ['an empty file instead of a missing one', { files: [{ ...base.files[0]!, content: Buffer.alloc(0) }, base.files[1]!] }],
    ['the install command', { install: 'npm ci' }],
    ['the outputs', { paths: ['node_modules', 'vendor'] }],
    ['the environment', { environment: 'docker:sha256:abd' }],
    ['a file renamed', { files: [{ path: 'pkg.json', content: base.files[0]!.content }, base.files[1]!] }],
  ])('changes with %s', (_what, change) => {
    expect(computeDepsKey({ ...base, ...change })).not.toBe(computeDepsKey(base));
  });

  it('cannot be fooled by moving bytes between a path and a content', () => {
    const a = { ...base, files: [{ path: 'ab', content: Buffer.from('c') }] };
    const b = { ...base, files: [{ path: 'a', content: Buffer.from('bc') }] };
    expect(computeDepsKey(a)).not.toBe(computeDepsKey(b));
  });
});

describe('depsFilesDigest', () => {
  it('depends on the files alone', () => {
    expect(depsFilesDigest(base.files)).toBe(depsFilesDigest([...base.files].reverse()));
    expect(depsFilesDigest(base.files)).not.toBe(depsFilesDigest([base.files[0]!]));
  });
});

describe('the key of an npm project', () => {
  const pkg = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify({ name: 'p', version: '1.0.0', ...fields }, null, 2));
  const lock = (version: string, deps: Record<string, string>) =>
    Buffer.from(
      JSON.stringify({
        name: 'p',
        version,
        lockfileVersion: 3,
        packages: { '': { name: 'p', version, dependencies: deps }, 'node_modules/semver': { version: '7.6.3' } },
      }),
    );
  const keyOf = (files: DepsKeyInput['files']) => computeDepsKey({ ...base, files });
  const deps = { dependencies: { semver: '^7.6.3' } };

  it('stays the same when a release bumps the version in package.json and its lockfile', () => {
    const before = keyOf([
      { path: 'package.json', content: pkg({ ...deps, scripts: { test: 'tap' } }) },
      { path: 'package-lock.json', content: lock('1.0.0', deps.dependencies) },
    ]);
    const after = keyOf([
      {
        path: 'package.json',
        content: Buffer.from(JSON.stringify({ ...deps, version: '1.0.1', name: 'p', description: 'now described', scripts: { test: 'tap --cov' } })),
      },
      { path: 'package-lock.json', content: lock('1.0.1', deps.dependencies) },
    ]);
    expect(after).toBe(before);
  });

  it.each([
    ['a dependency', { dependencies: { semver: '^7.7.0' } }],
    ['a dev dependency', { ...deps, devDependencies: { tap: '^16' } }],
    ['an optional dependency', { ...deps, optionalDependencies: { fsevents: '*' } }],
    ['a peer dependency', { ...deps, peerDependencies: { react: '18' } }],
    ['an override', { ...deps, overrides: { semver: '7.6.0' } }],
    ['the workspaces', { ...deps, workspaces: ['packages/*'] }],
    ['a script npm install runs', { ...deps, scripts: { postinstall: 'node fetch.js' } }],
  ])('changes with %s of package.json', (_what, fields) => {
    expect(keyOf([{ path: 'package.json', content: pkg(fields) }])).not.toBe(keyOf([{ path: 'package.json', content: pkg(deps) }]));
  });

  it('changes with what the lockfile resolves, and with package.json in a sub-directory the same way', () => {
    expect(keyOf([{ path: 'package-lock.json', content: lock('1.0.0', { semver: '^7.7.0' }) }])).not.toBe(
      keyOf([{ path: 'package-lock.json', content: lock('1.0.0', deps.dependencies) }]),
    );
    expect(keyOf([{ path: 'web/package.json', content: pkg({ ...deps, version: '2.0.0' }) }])).toBe(keyOf([{ path: 'web/package.json', content: pkg(deps) }]));
  });

  it('keys a package.json that is not JSON on its bytes, so a broken one is never taken for a good one', () => {
    expect(keyOf([{ path: 'package.json', content: Buffer.from('{ "dependencies": ') }])).not.toBe(
      keyOf([{ path: 'package.json', content: Buffer.from('{}') }]),
    );
  });
});
