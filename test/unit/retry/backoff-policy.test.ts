import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { createRng } from '../../../src/reliability/prng.js';
import { backoffDelay, backoffPolicy } from '../../../src/retry/backoff-policy.js';

const delays = (policy: Parameters<typeof backoffDelay>[0], n: number, draw: () => number = () => 0) =>
  Array.from({ length: n }, (_, i) => backoffDelay(policy, i + 1, draw()));

describe('backoffDelay', () => {
  it('grows by the factor from the first wait and stops growing at the cap', () => {
    expect(delays(backoffPolicy({ initialMs: 1000, maxMs: 10_000 }), 6)).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(delays(backoffPolicy({ initialMs: 50, maxMs: 1000, factor: 3 }), 4)).toEqual([50, 150, 450, 1000]);
    expect(delays(backoffPolicy({ initialMs: 250, maxMs: 250, factor: 1 }), 3)).toEqual([250, 250, 250]);
  });

  it('gives up after maxRetries and never before', () => {
    const policy = backoffPolicy({ initialMs: 10, maxMs: 100, maxRetries: 3 });
    expect(delays(policy, 5)).toEqual([10, 20, 40, null, null]);
    expect(backoffDelay(backoffPolicy({ initialMs: 10, maxMs: 100, maxRetries: 0 }), 1, 0)).toBeNull();
  });

  it('takes at most the jitter share off a wait, and never waits past the cap', () => {
    const policy = backoffPolicy({ initialMs: 1000, maxMs: 8000, jitter: 0.5 });
    const rng = createRng(7);
    for (let retry = 1; retry <= 200; retry++) {
      const full = Math.min(8000, 1000 * 2 ** (retry - 1));
      const wait = backoffDelay(policy, retry, rng.next())!;
      expect(wait).toBeGreaterThanOrEqual(full / 2);
      expect(wait).toBeLessThanOrEqual(full);
    }
    expect(backoffDelay(policy, 4, 0)).toBe(8000);
    expect(backoffDelay(policy, 4, 0.999_999)).toBe(4000);
  });

  it('spreads the waits of many waiters that failed together', () => {
    const policy = backoffPolicy({ initialMs: 1000, maxMs: 60_000, jitter: 1 });
    const rng = createRng(1);
    const waits = Array.from({ length: 1000 }, () => backoffDelay(policy, 3, rng.next())!);
    // 1000 draws over 4001 whole-ms waits (0 to 4000): about 885 distinct ones if uniform.
    expect(new Set(waits).size).toBeGreaterThan(850);
    const mean = waits.reduce((a, b) => a + b, 0) / waits.length;
    expect(mean).toBeGreaterThan(1800);
    expect(mean).toBeLessThan(2200);
  });

  it('gives the same waits for the same seed', () => {
    const policy = backoffPolicy({ initialMs: 100, maxMs: 10_000, jitter: 0.3 });
    const a = createRng(42);
    const b = createRng(42);
    expect(delays(policy, 20, () => a.next())).toEqual(delays(policy, 20, () => b.next()));
  });

  it('survives a retry count far past the cap', () => {
    expect(backoffDelay(backoffPolicy({ initialMs: 1, maxMs: 5000 }), 5000, 0)).toBe(5000);
  });

  it('refuses a policy or a retry number that makes no sense, naming the field', () => {
    expect(() => backoffPolicy({ initialMs: -1, maxMs: 10 })).toThrow(/initialMs must be/);
    expect(() => backoffPolicy({ initialMs: 100, maxMs: 10 })).toThrow(/maxMs must be finite and >= initialMs/);
    expect(() => backoffPolicy({ initialMs: 1, maxMs: 10, factor: 0.5 })).toThrow(/factor must be/);
    expect(() => backoffPolicy({ initialMs: 1, maxMs: 10, jitter: 2 })).toThrow(/jitter must be in \[0, 1\]/);
    expect(() => backoffPolicy({ initialMs: 1, maxMs: 10, maxRetries: 1.5 })).toThrow(/maxRetries must be/);
    expect(() => backoffPolicy({ initialMs: 1, maxMs: Infinity })).toThrow(GenesisError);
    expect(() => backoffDelay(backoffPolicy({ initialMs: 1, maxMs: 10 }), 0, 0)).toThrow(/retry must be an integer >= 1/);
  });
});
