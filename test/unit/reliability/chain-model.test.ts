import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { compileChainModel, computeChainLength, computeStepOutcome, type ChainInput } from '../../../src/reliability/index.js';

function expectModelError(action: () => unknown, message: RegExp): void {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(GenesisError);
    expect((error as GenesisError).code).toBe('invalid-model-input');
    expect((error as GenesisError).message).toMatch(message);
    return;
  }
  throw new Error('expected a GenesisError');
}

describe('computeStepOutcome', () => {
  it('reproduces the numbers of the issue for e 0.05, w 0.03, 3 attempts, recall 0.8, false rejections 0.05', () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03, attempts: 3, recall: 0.8, falseReject: 0.05 });
    // r = 0.05 + 0.92·0.05 + 0.03·0.8, a = 0.92·0.95, b = 0.03·0.2, S_3 = 1 + r + r².
    expect(step.retry).toBeCloseTo(0.12, 12);
    expect(step.attempts).toBeCloseTo(1.1344, 12);
    expect(step.correct).toBeCloseTo(0.874 * 1.1344, 12);
    expect(step.silentlyWrong).toBeCloseTo(0.006 * 1.1344, 12);
    expect(step.givesUp).toBeCloseTo(0.001728, 12);
  });

  it('gives a retry rate of 0.05, not 0.12, for the same step without a verifier', () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03, attempts: 3 });
    expect(step.retry).toBeCloseTo(0.05, 12);
    expect(step.attempts).toBeCloseTo(1.0525, 12);
    expect(step.correct).toBeCloseTo(0.92 * 1.0525, 12);
    expect(step.silentlyWrong).toBeCloseTo(0.03 * 1.0525, 12);
    expect(step.givesUp).toBeCloseTo(0.000125, 15);
  });

  it('splits every step into correct, silently wrong or gives up, summing to 1', () => {
    const inputs: ChainInput[] = [
      { e: 0.05, w: 0.03 },
      { e: 0.2, w: 0.1, attempts: 5, recall: 0.7, falseReject: 0.1 },
      { e: 0, w: 0.5, attempts: 2, recall: 1 },
      { e: 0.999, w: 0.001, attempts: 50 },
    ];
    for (const input of inputs) {
      const step = computeStepOutcome(input);
      expect(step.correct + step.silentlyWrong + step.givesUp).toBeCloseTo(1, 12);
    }
  });

  it('reduces to one plain attempt when there is one attempt and no verifier', () => {
    const step = computeStepOutcome({ e: 0.1, w: 0.2 });
    expect(step).toEqual({ retry: 0.1, correct: expect.closeTo(0.7, 12), silentlyWrong: 0.2, givesUp: 0.1, attempts: 1, rounds: 1 });
  });

  it('takes every attempt and never succeeds when every attempt is retried (r = 1)', () => {
    const step = computeStepOutcome({ e: 1, w: 0, attempts: 4 });
    expect(step).toEqual({ retry: 1, correct: 0, silentlyWrong: 0, givesUp: 1, attempts: 4, rounds: 4 });
    expect(computeChainLength(step, 10)).toEqual({ steps: 10, success: 0, expectedAttempts: 4 });
  });

  it('succeeds with certainty when nothing ever goes wrong', () => {
    const step = computeStepOutcome({ e: 0, w: 0, attempts: 3, recall: 0.9 });
    expect(step).toEqual({ retry: 0, correct: 1, silentlyWrong: 0, givesUp: 0, attempts: 1, rounds: 1 });
    expect(computeChainLength(step, 1000)).toEqual({ steps: 1000, success: 1, expectedAttempts: 1000 });
  });

  it('keeps its digits when r is close to 1 and attempts are many', () => {
    const step = computeStepOutcome({ e: 0.999999, w: 0, attempts: 1000 });
    const sum = Array.from({ length: 1000 }, (_, j) => 0.999999 ** j).reduce((x, y) => x + y, 0);
    expect(step.attempts).toBeCloseTo(sum, 8);
  });
});

describe('computeChainLength', () => {
  it("reproduces success 0.9179 and 11.256 expected attempts for the issue's ten steps", () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03, attempts: 3, recall: 0.8, falseReject: 0.05 });
    const ten = computeChainLength(step, 10);
    expect(ten.success).toBeCloseTo(0.9914656 ** 10, 12);
    expect(ten.success).toBeCloseTo(0.9179, 4);
    const q = 1 - 0.001728;
    expect(ten.expectedAttempts).toBeCloseTo((1.1344 * (1 - q ** 10)) / (1 - q), 10);
    expect(ten.expectedAttempts).toBeCloseTo(11.256, 3);
  });

  it('gives p^n for a step without retries, 0.92^10 = 43.4%', () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03 });
    expect(computeChainLength(step, 10).success).toBeCloseTo(0.4344, 4);
    expect(computeChainLength(step, 30).success).toBeCloseTo(0.92 ** 30, 12);
  });

  it('counts attempts until the first step that gives up', () => {
    // One attempt, visible errors only: the run stops at the first error, so attempts are
    // 1 + 0.9 + 0.81 for three steps.
    const step = computeStepOutcome({ e: 0.1, w: 0 });
    expect(computeChainLength(step, 3).expectedAttempts).toBeCloseTo(1 + 0.9 + 0.81, 12);
  });

  it('equals the one-step outcome for a chain of one step', () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03, attempts: 2, recall: 0.5 });
    expect(computeChainLength(step, 1)).toEqual({ steps: 1, success: step.correct, expectedAttempts: step.attempts });
  });

  it('rejects a chain of zero or fractional steps', () => {
    const step = computeStepOutcome({ e: 0.05, w: 0.03 });
    expectModelError(() => computeChainLength(step, 0), /^steps must be an integer >= 1, got 0$/);
    expectModelError(() => computeChainLength(step, 2.5), /^steps must be an integer >= 1, got 2.5$/);
  });
});

describe('compileChainModel', () => {
  it('fills in no verifier and one attempt by default', () => {
    expect(compileChainModel({ e: 0.05, w: 0.03 })).toEqual({
      e: 0.05,
      w: 0.03,
      c: expect.closeTo(0.92, 12),
      recall: 0,
      falseReject: 0,
      attempts: 1,
      race: 1,
    });
  });

  it('accepts e + w = 1 despite floating-point rounding', () => {
    expect(compileChainModel({ e: 0.7, w: 0.3 }).c).toBe(0);
    expect(compileChainModel({ e: 0.1 + 0.2, w: 0.7 }).c).toBe(0);
  });

  it.each([
    [{ e: -0.1, w: 0 }, /^e \(visible error rate\) must be a probability in \[0, 1\], got -0.1$/],
    [{ e: 0.1, w: 1.5 }, /^w \(silent error rate\) must be a probability in \[0, 1\], got 1.5$/],
    [{ e: Number.NaN, w: 0 }, /^e \(visible error rate\) must be a probability in \[0, 1\], got NaN$/],
    [{ e: 0.1, w: 0, recall: 2 }, /^recall \(verifier recall\) must be a probability in \[0, 1\], got 2$/],
    [{ e: 0.1, w: 0, falseReject: -1 }, /^falseReject .* must be a probability in \[0, 1\], got -1$/],
    [{ e: 0.6, w: 0.5 }, /^e \+ w must be at most 1, got 0.6 \+ 0.5/],
    [{ e: 0.1, w: 0, attempts: 0 }, /^attempts must be an integer >= 1, got 0$/],
    [{ e: 0.1, w: 0, attempts: 1.5 }, /^attempts must be an integer >= 1, got 1.5$/],
  ])('rejects %o with invalid-model-input naming the parameter and its range', (input, message) => {
    expectModelError(() => compileChainModel(input), message);
    expectModelError(() => computeStepOutcome(input), message);
  });
});

describe('a raced step', () => {
  it('succeeds with 1 − (1 − p)^N at N times the cost and one attempt of time per round', () => {
    const one = computeStepOutcome({ e: 0.3, w: 0 });
    const raced = computeStepOutcome({ e: 0.3, w: 0, race: 3 });
    expect(one.correct).toBeCloseTo(0.7, 12);
    expect(raced.correct).toBeCloseTo(1 - 0.3 ** 3, 12);
    expect(raced).toMatchObject({ rounds: 1, attempts: 3 });
    expect(raced.givesUp).toBeCloseTo(0.3 ** 3, 12);
  });

  it('lets a racer that is silently wrong win in proportion to how often it is accepted, as a verifier sees it', () => {
    const input = { e: 0.2, w: 0.1, recall: 0.5, falseReject: 0, attempts: 2, race: 2 } as const;
    const step = computeStepOutcome(input);
    const r = 0.2 + 0.1 * 0.5;
    const a = 0.7;
    const b = 0.05;
    const rounds = 1 + r ** 2;
    expect(step.retry).toBeCloseTo(r ** 2, 12);
    expect(step.correct).toBeCloseTo((((1 - r ** 2) * a) / (a + b)) * rounds, 12);
    expect(step.silentlyWrong).toBeCloseTo((((1 - r ** 2) * b) / (a + b)) * rounds, 12);
    expect(step.correct + step.silentlyWrong + step.givesUp).toBeCloseTo(1, 12);
    expect(step.attempts).toBeCloseTo(2 * rounds, 12);
  });

  it('refuses a race of no episode', () => {
    expect(() => compileChainModel({ e: 0.1, w: 0.1, race: 0 })).toThrow(/race/);
  });
});
