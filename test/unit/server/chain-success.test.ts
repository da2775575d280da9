import { describe, expect, it } from 'vitest';
import { computeChainSuccess } from '../../../src/server/projections/chain-success.js';

describe('success against chain length', () => {
  it('draws p^n and p_task^n out to twice the 50% horizon', () => {
    const chain = computeChainSuccess([true, false], 0.99, 0.9999, 3);
    expect(chain.maxLength).toBe(138); // 2 × 68.97
    expect(chain.perEpisode[0]).toEqual({ n: 1, success: 0.99 });
    expect(chain.perEpisode.at(-1)!.n).toBe(138);
    expect(chain.perEpisode.at(-1)!.success).toBeCloseTo(0.99 ** 138, 12);
    expect(chain.perTask.at(-1)!.success).toBeCloseTo(0.9999 ** 138, 12);
  });

  it('measures runs of n consecutive episodes without overlap, leaving out lengths with fewer than two runs', () => {
    // Failures come in a burst, so runs of 3 succeed more often than p^3 says.
    const decided = [true, true, true, true, true, true, false, false, false, true, true, true];
    const chain = computeChainSuccess(decided, 0.75, 0.9, 2);
    expect(chain.measured.map((m) => [m.n, m.chains, m.successes])).toEqual([
      [1, 12, 9],
      [2, 6, 4],
      [3, 4, 3],
      [4, 3, 1],
      [5, 2, 1],
      [6, 2, 1],
    ]);
    const three = chain.measured[2]!;
    expect(three.rate).toBeGreaterThan(0.75 ** 3);
    expect(three.low).toBeLessThan(three.rate);
    expect(three.high).toBeGreaterThan(three.rate);
  });

  it('keeps a usable axis when every episode was accepted or none was', () => {
    expect(computeChainSuccess([true, true], 1, 1, 1).maxLength).toBe(100);
    expect(computeChainSuccess([false, false], 0, 0, 1).maxLength).toBe(10);
  });
});
