import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { planReadOnlyMounts } from '../../../src/sandbox/gate/read-only-paths.js';

describe('planReadOnlyMounts', () => {
  it('pins every directory between the work dir and a read-only path, parents first', () => {
    expect(planReadOnlyMounts(['test', 'a/b/c.js', 'world.yaml', 'a/d.js'])).toEqual({
      pinned: ['a', 'a/b'],
      readOnly: ['test', 'world.yaml', 'a/d.js', 'a/b/c.js'],
    });
  });

  it('drops paths already inside a read-only directory, and normalizes the rest', () => {
    expect(planReadOnlyMounts(['test/', './test/x.js', 'src//a.js'])).toEqual({ pinned: ['src'], readOnly: ['test', 'src/a.js'] });
  });

  it('refuses a path outside the work dir, or the work dir itself', () => {
    for (const bad of ['../x', '/etc/passwd', '.', 'a/../../b']) expect(() => planReadOnlyMounts([bad])).toThrow(GenesisError);
  });

  it('plans nothing without paths', () => {
    expect(planReadOnlyMounts(undefined)).toEqual({ pinned: [], readOnly: [] });
  });
});
