import { describe, expect, it } from 'vitest';
import { camelCase, kebabCase, pascalCase, snakeCase } from '../src/case.js';

describe('case conversions', () => {
  it('converts between the usual cases', () => {
    expect(camelCase('Hello big World')).toBe('helloBigWorld');
    expect(pascalCase('hello_big_world')).toBe('HelloBigWorld');
    expect(kebabCase('helloBigWorld')).toBe('hello-big-world');
    expect(snakeCase('Hello-Big world')).toBe('hello_big_world');
  });

  it('keeps an empty string empty', () => {
    expect(camelCase('')).toBe('');
    expect(kebabCase('')).toBe('');
  });
});
