import { assertInteger, rejectModelInput } from './validate.js';

/** z for a two-sided 95% interval: the 97.5th percentile of the standard normal. */
export const Z_95 = 1.959963984540054;

/** A two-sided interval around an estimate. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * The Wilson score interval for `successes` out of `trials`. Unlike the normal ("Wald") interval
 * it stays inside [0, 1] and does not collapse to a point at 0 or n successes, which matters for
 * the small counts a ledger has. Zero trials give [0, 1]: nothing is known.
 */
export function computeWilsonInterval(successes: number, trials: number, z: number = Z_95): Interval {
  assertInteger('trials', trials, 0);
  assertInteger('successes', successes, 0);
  if (successes > trials) rejectModelInput(`successes must be at most trials, got ${successes} > ${trials}`);
  if (trials === 0) return { low: 0, high: 1 };
  const z2 = z * z;
  const denominator = trials + z2;
  const centre = (successes + z2 / 2) / denominator;
  const half = (z / denominator) * Math.sqrt((successes * (trials - successes)) / trials + z2 / 4);
  // Exact at the ends, where rounding would leave 1e-17 instead of 0.
  return {
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === trials ? 1 : Math.min(1, centre + half),
  };
}
