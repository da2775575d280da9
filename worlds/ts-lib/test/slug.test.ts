import { describe, expect, it } from 'vitest';
import { slugify } from '../src/slug.js';

describe('slugify', () => {
  it('makes lowercase, dash-joined ASCII slugs', () => {
    expect(slugify('Hello, World!')).toBe('hello-world');
    expect(slugify('  Déjà vu: Crème brûlée  ')).toBe('deja-vu-creme-brulee');
  });

  it('cuts long slugs at a word boundary', () => {
    expect(slugify('one two three four', { maxLength: 9 })).toBe('one-two');
  });
});
