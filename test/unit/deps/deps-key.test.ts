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
