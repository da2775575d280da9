import { describe, expect, it } from 'vitest';
import { words } from '../src/words.js';

describe('words', () => {
  it('splits on spaces, punctuation and case changes', () => {
    expect(words('hello world')).toEqual(['hello', 'world']);
    expect(words('  fooBar_baz-qux ')).toEqual(['foo', 'Bar', 'baz', 'qux']);
    expect(words('parseHTTPResponse2')).toEqual(['parse', 'HTTP', 'Response2']);
  });

  it('returns nothing for text without letters or digits', () => {
    expect(words('')).toEqual([]);
    expect(words(' -_ ')).toEqual([]);
  });
});
