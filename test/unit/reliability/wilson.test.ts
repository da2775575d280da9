import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { computeWilsonInterval } from '../../../src/reliability/index.js';

describe('computeWilsonInterval', () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table II, method 3.
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("matches Newcombe's published interval for %i of %i", (successes, trials, low, high) => {
    const interval = computeWilsonInterval(successes, trials);
    expect(interval.low).toBeCloseTo(low, 4);
    expect(interval.high).toBeCloseTo(high, 4);
  });

  it('is exactly 0 or 1 at the ends and symmetric around one half', () => {
    expect(computeWilsonInterval(0, 10).low).toBe(0);
    expect(computeWilsonInterval(10, 10).high).toBe(1);
    const half = computeWilsonInterval(5, 10);
    expect(half.low + half.high).toBeCloseTo(1, 14);
  });

  it('knows nothing after zero trials', () => {
    expect(computeWilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it('narrows with a smaller z', () => {
    const wide = computeWilsonInterval(30, 100);
    const narrow = computeWilsonInterval(30, 100, 1);
    expect(narrow.low).toBeGreaterThan(wide.low);
    expect(narrow.high).toBeLessThan(wide.high);
  });

  it('rejects more successes than trials', () => {
    expect(() => computeWilsonInterval(11, 10)).toThrow(GenesisError);
    expect(() => computeWilsonInterval(11, 10)).toThrow('successes must be at most trials, got 11 > 10');
  });
});
