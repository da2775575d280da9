import { describe, expect, it } from 'vitest';
import { VERSION } from '../src/version.js';

describe('the library', () => {
  it('has a version', () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
