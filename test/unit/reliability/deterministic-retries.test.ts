import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { computeEffectiveFailure, computeEffectiveReliability, computeHorizonFromFailure, computeHorizonSteps } from '../../../src/reliability/index.js';

describe('computeEffectiveReliability', () => {
  it("gives the issue's p_eff of 0.99749925 for p 0.99, 3 attempts, a quarter deterministic", () => {
    expect(computeEffectiveReliability({ p: 0.99, attempts: 3, deterministic: 0.25 })).toBeCloseTo(0.99749925, 14);
  });

  it('reduces to p with one attempt, whatever the deterministic fraction', () => {
    for (const deterministic of [0, 0.3, 1]) {
      expect(computeEffectiveReliability({ p: 0.9, attempts: 1, deterministic })).toBeCloseTo(0.9, 14);
    }
  });

  it('reduces to 1 − (1 − p)^k when no failure is deterministic', () => {
    expect(computeEffectiveReliability({ p: 0.9, attempts: 3 })).toBeCloseTo(1 - 0.1 ** 3, 14);
  });

  it('gains nothing from retries when every failure is deterministic', () => {
    expect(computeEffectiveReliability({ p: 0.9, attempts: 10, deterministic: 1 })).toBeCloseTo(0.9, 14);
  });

  it('keeps a failure probability of 1e-20 that p_eff itself rounds away', () => {
    expect(computeEffectiveFailure({ p: 0.99, attempts: 10 })).toBeCloseTo(1e-20, 30);
    expect(computeEffectiveReliability({ p: 0.99, attempts: 10 })).toBe(1);
  });

  it('rejects a deterministic fraction outside [0, 1] and zero attempts', () => {
    expect(() => computeEffectiveReliability({ p: 0.9, deterministic: 1.2 })).toThrow(
      'deterministic (fraction of failures that repeat) must be a probability in [0, 1], got 1.2',
    );
    expect(() => computeEffectiveReliability({ p: 0.9, attempts: 0 })).toThrow(GenesisError);
    expect(() => computeEffectiveReliability({ p: 1.01 })).toThrow('p (per-attempt success) must be a probability in [0, 1], got 1.01');
  });
});

describe('computeHorizonSteps', () => {
  it("gives the issue's horizons of 276.83 and 89.12 steps at 50% and 80%", () => {
    const failure = computeEffectiveFailure({ p: 0.99, attempts: 3, deterministic: 0.25 });
    expect(computeHorizonFromFailure(failure, 0.5)).toBeCloseTo(276.83, 2);
    expect(computeHorizonFromFailure(failure, 0.8)).toBeCloseTo(89.12, 2);
  });

  it('gives 69 steps at 50% for a 99% step, and 693 for a 99.9% step', () => {
    expect(computeHorizonSteps(0.99, 0.5)).toBeCloseTo(68.97, 2);
    expect(computeHorizonSteps(0.999, 0.5)).toBeCloseTo(692.8, 1);
  });

  it('keeps the ratio between thresholds at ln(s1)/ln(s2), whatever p', () => {
    for (const p of [0.9, 0.99, 0.9999]) {
      expect(computeHorizonSteps(p, 0.95) / computeHorizonSteps(p, 0.5)).toBeCloseTo(Math.log(0.95) / Math.log(0.5), 10);
    }
  });

  it('is infinite when nothing fails and zero when everything does', () => {
    expect(computeHorizonSteps(1, 0.5)).toBe(Number.POSITIVE_INFINITY);
    expect(computeHorizonFromFailure(0, 0.5)).toBe(Number.POSITIVE_INFINITY);
    expect(computeHorizonSteps(0, 0.5)).toBe(0);
  });

  it('rejects a threshold of 0 or 1, which has no horizon', () => {
    for (const threshold of [0, 1, 1.5]) {
      expect(() => computeHorizonSteps(0.9, threshold)).toThrow(`threshold (success threshold) must be in (0, 1), exclusive, got ${threshold}`);
    }
  });
});
