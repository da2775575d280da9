import { describe, expect, it } from 'vitest';
import { chooseEvictions, type CachedSetInfo } from '../../../src/deps/cache/evict.js';

const HOUR = 3_600_000;
const now = 100 * HOUR;
const set = (key: string, mb: number, hoursAgo: number): CachedSetInfo => ({ key, bytes: mb * 1024 * 1024, lastUsedMs: now - hoursAgo * HOUR });
const policy = (capMb: number, extra = {}) => ({ capBytes: capMb * 1024 * 1024, graceMs: HOUR, now, ...extra });

describe('chooseEvictions', () => {
  it('evicts nothing while the cache fits its cap', () => {
    expect(chooseEvictions([set('a', 100, 5), set('b', 100, 9)], policy(200))).toEqual([]);
  });

  it('evicts the least recently used sets first, only as many as it takes', () => {
    const sets = [set('new', 100, 2), set('old', 100, 50), set('mid', 100, 10)];
    expect(chooseEvictions(sets, policy(150))).toEqual(['old', 'mid']);
    expect(chooseEvictions(sets, policy(250))).toEqual(['old']);
  });

  it('keeps sets used within the grace period even over the cap', () => {
    expect(chooseEvictions([set('busy', 500, 0.5), set('idle', 10, 3)], policy(100))).toEqual(['idle']);
  });

  it('never evicts a set it is told to keep', () => {
    expect(chooseEvictions([set('just-made', 500, 30), set('other', 100, 2)], policy(100, { keep: new Set(['just-made']) }))).toEqual(['other']);
  });

  it('breaks ties in last use by key, so two workers choose alike', () => {
    expect(chooseEvictions([set('b', 100, 5), set('a', 100, 5)], policy(100))).toEqual(['a']);
  });
});
