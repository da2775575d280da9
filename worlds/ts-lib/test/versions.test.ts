import { describe, expect, it } from 'vitest';
import { latest, satisfying } from '../src/versions.js';

describe('versions', () => {
  it('finds the latest valid version, ignoring invalid ones', () => {
    expect(latest(['1.2.3', '1.10.0', 'not-a-version', '1.9.9'])).toBe('1.10.0');
    expect(latest(['nope'])).toBeNull();
  });

  it('keeps the versions a range accepts, oldest first', () => {
    expect(satisfying(['2.0.0', '1.4.0', '1.2.0', '0.9.0'], '^1.2.0')).toEqual(['1.2.0', '1.4.0']);
  });
});
