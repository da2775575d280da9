import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { createRng } from '../../../src/reliability/index.js';
import { createXoshiro128 } from '../../../src/reliability/prng.js';

describe('createRng', () => {
  it('matches the reference C implementation of xoshiro128** from state 1, 2, 3, 4', () => {
    const rng = createXoshiro128([1, 2, 3, 4]);
    const first = Array.from({ length: 8 }, () => rng.nextUint32());
    expect(first).toEqual([11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849]);
  });

  it('gives the same first numbers for seed 7 on every machine', () => {
    const rng = createRng(7);
    expect(Array.from({ length: 4 }, () => rng.nextUint32())).toEqual([210494603, 711084892, 3993689120, 4089369890]);
  });

  it('repeats its sequence for the same seed and changes it for another', () => {
    const draw = (seed: number) => {
      const rng = createRng(seed);
      return Array.from({ length: 100 }, () => rng.next());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('draws floats in [0, 1) with a mean near one half', () => {
    const rng = createRng(1);
    const values = Array.from({ length: 100_000 }, () => rng.next());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    // The mean of n uniforms has SD 1/sqrt(12n) ≈ 0.0009.
    expect(Math.abs(values.reduce((x, y) => x + y, 0) / values.length - 0.5)).toBeLessThan(0.004);
  });

  it('draws integers below n', () => {
    const rng = createRng(3);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i += 1) {
      const k = rng.nextInt(3);
      counts[k] = (counts[k] ?? 0) + 1;
    }
    expect(counts).toHaveLength(3);
    // Each count is binomial(3000, 1/3): SD about 26.
    for (const count of counts) expect(Math.abs(count - 1000)).toBeLessThan(130);
  });

  it('rejects a seed that is not a 32-bit unsigned integer', () => {
    expect(() => createRng(-1)).toThrow(GenesisError);
    expect(() => createRng(1.5)).toThrow('seed must be an integer >= 0, got 1.5');
    expect(() => createRng(2 ** 32)).toThrow('seed must be an integer in [0, 4294967295], got 4294967296');
  });
});
