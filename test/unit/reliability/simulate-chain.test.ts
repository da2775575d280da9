import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import {
  compileChainModel,
  computeChainLength,
  computeStepOutcome,
  simulateChain,
  simulateStep,
  type ChainInput,
  type Rng,
} from '../../../src/reliability/index.js';

/** An Rng that plays back fixed draws, to check the mechanics of one attempt. */
function scripted(draws: number[]): Rng {
  let i = 0;
  const next = () => {
    const value = draws[i++];
    if (value === undefined) throw new Error('ran out of scripted draws');
    return value;
  };
  return { next, nextUint32: () => Math.floor(next() * 2 ** 32), nextInt: (n) => Math.floor(next() * n) };
}

describe('simulateStep', () => {
  const model = compileChainModel({ e: 0.1, w: 0.2, attempts: 3, recall: 0.5, falseReject: 0.25 });

  it('retries a visible error, then accepts a right result the verifier lets through', () => {
    // 0.05 < e: visible error. 0.5 ≥ e + w: right; 0.9 ≥ f: accepted.
    expect(simulateStep(model, scripted([0.05, 0.5, 0.9]))).toEqual({ ending: 'correct', attempts: 2 });
  });

  it('retries a wrong result the verifier catches and accepts one it misses', () => {
    // 0.2 is in [e, e + w): wrong. 0.4 < recall: caught. Then wrong again, 0.6 ≥ recall: missed.
    expect(simulateStep(model, scripted([0.2, 0.4, 0.25, 0.6]))).toEqual({ ending: 'wrong', attempts: 2 });
  });

  it('gives up after its last attempt is rejected, false rejections included', () => {
    // Right but falsely rejected (0.1 < f), visible error, right but falsely rejected again.
    expect(simulateStep(model, scripted([0.9, 0.1, 0.0, 0.9, 0.2]))).toEqual({ ending: 'gave-up', attempts: 3 });
  });

  it('draws nothing for a verifier when there is none', () => {
    const plain = compileChainModel({ e: 0.1, w: 0.2 });
    expect(simulateStep(plain, scripted([0.15]))).toEqual({ ending: 'wrong', attempts: 1 });
  });
});

describe('simulateChain', () => {
  const input: ChainInput = { e: 0.05, w: 0.03, attempts: 3, recall: 0.8, falseReject: 0.05 };

  it('gives the same result for the same seed and a different one for another seed', () => {
    const options = { lengths: [10, 30], runs: 500 };
    expect(simulateChain(input, { ...options, seed: 7 })).toEqual(simulateChain(input, { ...options, seed: 7 }));
    expect(simulateChain(input, { ...options, seed: 7 })).not.toEqual(simulateChain(input, { ...options, seed: 8 }));
  });

  it('reads shorter lengths off the same runs, so adding a length below the longest changes nothing', () => {
    const alone = simulateChain(input, { lengths: [30, 10], runs: 500, seed: 3 });
    const more = simulateChain(input, { lengths: [5, 10, 30, 20], runs: 500, seed: 3 });
    expect(more.filter((l) => l.steps === 10 || l.steps === 30).reverse()).toEqual(alone);
  });

  it('returns a Wilson interval around the rate and a normal interval around the mean attempts', () => {
    const [ten] = simulateChain(input, { lengths: [10], runs: 1000, seed: 1 });
    expect(ten).toBeDefined();
    if (ten === undefined) return;
    expect(ten.success).toBe(ten.successes / 1000);
    expect(ten.low).toBeLessThan(ten.success);
    expect(ten.high).toBeGreaterThan(ten.success);
    expect(ten.attemptsHigh - ten.meanAttempts).toBeCloseTo((1.959963984540054 * ten.attemptsSd) / Math.sqrt(1000), 12);
  });

  it('rejects zero runs, an empty list of lengths and an invalid model', () => {
    expect(() => simulateChain(input, { lengths: [10], runs: 0, seed: 1 })).toThrow('runs must be an integer >= 1, got 0');
    expect(() => simulateChain(input, { lengths: [], runs: 10, seed: 1 })).toThrow(GenesisError);
    expect(() => simulateChain({ e: 0.9, w: 0.2 }, { lengths: [1], runs: 10, seed: 1 })).toThrow(/^e \+ w must be at most 1/);
  });
});

describe('when the simulation is calibrated against the closed forms', () => {
  const configurations: Array<{ name: string; input: ChainInput; steps: number }> = [
    { name: 'one attempt, no verifier', input: { e: 0.05, w: 0.03 }, steps: 10 },
    { name: 'visible errors only, one attempt', input: { e: 0.1, w: 0 }, steps: 5 },
    { name: 'three attempts, no verifier', input: { e: 0.05, w: 0.03, attempts: 3 }, steps: 10 },
    { name: 'two attempts, visible errors only, long chain', input: { e: 0.1, w: 0, attempts: 2 }, steps: 20 },
    { name: 'three attempts, frequent errors, no verifier', input: { e: 0.3, w: 0.1, attempts: 3 }, steps: 5 },
    { name: 'verifier without retries', input: { e: 0.02, w: 0.1, recall: 0.9 }, steps: 10 },
    { name: 'verifier with false rejections, no retries', input: { e: 0.05, w: 0.05, falseReject: 0.1 }, steps: 10 },
    { name: "the issue's example, ten steps", input: { e: 0.05, w: 0.03, attempts: 3, recall: 0.8, falseReject: 0.05 }, steps: 10 },
    { name: "the issue's example, thirty steps", input: { e: 0.05, w: 0.03, attempts: 3, recall: 0.8, falseReject: 0.05 }, steps: 30 },
    { name: 'four attempts, strong verifier, false rejections', input: { e: 0.02, w: 0.1, attempts: 4, recall: 0.9, falseReject: 0.1 }, steps: 10 },
    { name: 'silent errors only, weak verifier, heavy false rejections', input: { e: 0, w: 0.05, attempts: 2, recall: 0.5, falseReject: 0.2 }, steps: 15 },
    { name: 'five attempts, noisy step, verifier', input: { e: 0.2, w: 0.05, attempts: 5, recall: 0.7, falseReject: 0.02 }, steps: 8 },
  ];

  it.each(configurations.map((c, i) => [c.name, c, 1000 + i] as const))(
    'puts %s within four standard errors of its closed form over 6,000 runs',
    (_name, configuration, seed) => {
      const runs = 6000;
      const expected = computeChainLength(computeStepOutcome(configuration.input), configuration.steps);
      const [simulated] = simulateChain(configuration.input, { lengths: [configuration.steps], runs, seed });
      if (simulated === undefined) throw new Error('no simulated length');
      // Binomial standard error of a rate; sample SD over sqrt(n) for a mean.
      const successError = Math.sqrt((expected.success * (1 - expected.success)) / runs);
      const attemptsError = simulated.attemptsSd / Math.sqrt(runs);
      expect(successError).toBeGreaterThan(0);
      expect(attemptsError).toBeGreaterThan(0);
      expect(Math.abs(simulated.success - expected.success)).toBeLessThanOrEqual(4 * successError);
      expect(Math.abs(simulated.meanAttempts - expected.expectedAttempts)).toBeLessThanOrEqual(4 * attemptsError);
    },
  );
});

describe('a simulated race', () => {
  it('agrees with the closed form of a raced step, within its interval', () => {
    const input = { e: 0.25, w: 0.05, recall: 0.6, attempts: 2, race: 3 };
    const [sim] = simulateChain(input, { lengths: [5], runs: 20_000, seed: 7 });
    const closed = computeChainLength(computeStepOutcome(input), 5);
    expect(sim!.low).toBeLessThanOrEqual(closed.success);
    expect(sim!.high).toBeGreaterThanOrEqual(closed.success);
    expect(Math.abs(sim!.meanAttempts - closed.expectedAttempts)).toBeLessThan(0.05 * closed.expectedAttempts);
  });
});
