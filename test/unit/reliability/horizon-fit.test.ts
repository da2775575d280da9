import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { computeFittedHorizon, createRng, fitHorizon, fitLogistic, type HorizonPoint } from '../../../src/reliability/index.js';

/** METR-like data: tasks from 1 minute to 17 hours, six runs each, success from a known logistic. */
function generate(intercept: number, slope: number, tasks: number, runsPerTask: number, seed: number): HorizonPoint[] {
  const rng = createRng(seed);
  const points: HorizonPoint[] = [];
  for (let t = 0; t < tasks; t += 1) {
    const minutes = 2 ** (rng.next() * 10);
    const p = 1 / (1 + Math.exp(-(intercept + slope * Math.log2(minutes))));
    for (let run = 0; run < runsPerTask; run += 1) points.push({ minutes, success: rng.next() < p, task: `t${t}` });
  }
  return points;
}

// Sixteen attempts whose maximum-likelihood fit was computed independently (scipy, BFGS).
const SMALL: HorizonPoint[] = [
  [1, 1],
  [2, 1],
  [4, 1],
  [4, 0],
  [8, 1],
  [8, 1],
  [15, 1],
  [15, 0],
  [30, 1],
  [30, 0],
  [60, 0],
  [60, 1],
  [120, 0],
  [120, 0],
  [240, 1],
  [480, 0],
].map(([minutes, success]) => ({ minutes: minutes as number, success: success === 1 }));

describe('fitLogistic', () => {
  it('matches an independent maximum-likelihood fit on a small data set', () => {
    const fit = fitLogistic(
      SMALL.map((p) => Math.log2(p.minutes)),
      SMALL.map((p) => p.success),
    );
    expect(fit.method).toBe('mle');
    expect(fit.converged).toBe(true);
    expect(fit.intercept).toBeCloseTo(2.10749125, 6);
    expect(fit.slope).toBeCloseTo(-0.405249, 6);
    expect(fit.logLikelihood).toBeCloseTo(-9.398281470151971, 9);
  });

  it("falls back to Firth's penalty, with finite estimates, when successes and failures are separable", () => {
    const x = [0, 1, 2, 3, 4, 5, 6, 7];
    const y = [true, true, true, true, false, false, false, false];
    const fit = fitLogistic(x, y);
    expect(fit.separable).toBe(true);
    expect(fit.method).toBe('firth');
    expect(fit.converged).toBe(true);
    // Firth's estimate, computed independently by maximising the penalised likelihood.
    expect(fit.intercept).toBeCloseTo(3.6146054, 4);
    expect(fit.slope).toBeCloseTo(-1.03274439, 4);
  });

  it('refuses data with a single x value, which has no slope', () => {
    expect(() => fitLogistic([2, 2, 2], [true, false, true])).toThrow('a logistic fit needs at least two distinct x values (task lengths) to estimate a slope');
  });
});

describe('fitHorizon', () => {
  it('recovers a known slope and 50% and 80% horizons from generated data', () => {
    const slope = -0.8;
    const intercept = -slope * Math.log2(60); // a 50% horizon of one hour
    const points = generate(intercept, slope, 500, 6, 11);
    const fit = fitHorizon(points, { bootstrap: 100, seed: 5 });
    expect(fit.points).toBe(3000);
    expect(fit.tasks).toBe(500);
    expect(fit.bootstrap).toEqual({ samples: 100, seed: 5, resampled: 'tasks' });
    expect(fit.slope).toBeGreaterThan(slope - 0.1);
    expect(fit.slope).toBeLessThan(slope + 0.1);
    const [h50, h80] = fit.horizons;
    const true80 = computeFittedHorizon(intercept, slope, 0.8); // about 18.1 minutes
    expect(h50?.minutes).toBeGreaterThan(60 / 1.15);
    expect(h50?.minutes).toBeLessThan(60 * 1.15);
    expect(h80?.minutes).toBeGreaterThan(true80 / 1.25);
    expect(h80?.minutes).toBeLessThan(true80 * 1.25);
    // The bootstrap intervals bracket the estimate and cover the truth.
    expect(h50?.low).toBeLessThan(60);
    expect(h50?.high).toBeGreaterThan(60);
    expect(h80?.low).toBeLessThan(true80);
    expect(h80?.high).toBeGreaterThan(true80);
  });

  it('reads the horizon off the fit: 36.8 minutes at 50% and 3.4 at 80% on the small data set', () => {
    const fit = fitHorizon(SMALL, { bootstrap: 0 });
    expect(fit.horizons.map((h) => h.minutes)).toEqual([expect.closeTo(36.7707, 3), expect.closeTo(3.4334, 3)]);
    expect(fit.horizons.every((h) => h.low === null && h.high === null)).toBe(true);
    expect(fit.bootstrap.resampled).toBe('points');
  });

  it('gives the same bootstrap intervals for the same seed', () => {
    expect(fitHorizon(SMALL, { bootstrap: 50, seed: 9 })).toEqual(fitHorizon(SMALL, { bootstrap: 50, seed: 9 }));
  });

  it('reports an unbounded horizon when success does not fall with task length', () => {
    expect(computeFittedHorizon(0, 0.5, 0.5)).toBe(Number.POSITIVE_INFINITY);
  });

  it('rejects data with only successes and task lengths that are not positive', () => {
    const all = SMALL.map((p) => ({ ...p, success: true }));
    expect(() => fitHorizon(all)).toThrow(GenesisError);
    expect(() => fitHorizon(all)).toThrow('a horizon fit needs both successes and failures, got 16 of 16');
    expect(() => fitHorizon([...SMALL, { minutes: 0, success: true }])).toThrow('minutes (human minutes of a task) must be a finite number > 0, got 0');
  });
});
