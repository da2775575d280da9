import { assertInteger, assertOpenProbability, assertProbability } from './validate.js';

/** The per-step reliability of a step retried `attempts` times when some failures always repeat. */
export interface EffectiveReliabilityInput {
  /** Probability that one attempt succeeds. */
  p: number;
  /** Attempts per step, the first included. @default 1 */
  attempts?: number;
  /** Fraction of failures that repeat on every retry (a wrong assumption, a missing file). @default 0 */
  deterministic?: number;
}

/**
 * 1 − p_eff = (1 − p)·[c + (1 − c)(1 − p)^(k − 1)]: a deterministic failure (fraction c) is never
 * fixed by a retry, a transient one must recur on all k − 1 retries. Computed as a failure
 * probability because p_eff = 1 − 1e-20 would round to 1 and lose the horizon.
 */
export function computeEffectiveFailure(input: EffectiveReliabilityInput): number {
  const attempts = input.attempts ?? 1;
  const deterministic = input.deterministic ?? 0;
  assertProbability('p (per-attempt success)', input.p);
  assertInteger('attempts', attempts, 1);
  assertProbability('deterministic (fraction of failures that repeat)', deterministic);
  const q = 1 - input.p;
  return q * (deterministic + (1 - deterministic) * q ** (attempts - 1));
}

/**
 * p_eff = 1 − (1 − p)·[c + (1 − c)(1 − p)^(k − 1)]. k = 1 gives p; c = 0 gives 1 − (1 − p)^k;
 * c = 1 gives p again (retries fix nothing).
 */
export function computeEffectiveReliability(input: EffectiveReliabilityInput): number {
  return 1 - computeEffectiveFailure(input);
}

/**
 * The number of steps after which a chain of steps, each failing with probability `failure`,
 * still succeeds with probability `threshold`: ln(threshold)/ln(1 − failure). Not rounded: 276.83
 * means 276 whole steps clear the threshold and 277 do not. Infinity when nothing ever fails,
 * 0 when everything does.
 */
export function computeHorizonFromFailure(failure: number, threshold: number): number {
  assertProbability('failure (per-step failure probability)', failure);
  assertOpenProbability('threshold (success threshold)', threshold);
  if (failure === 0) return Number.POSITIVE_INFINITY;
  // log1p keeps the digits of a failure probability of 1e-12 that Math.log(1 - 1e-12) loses.
  return Math.log(threshold) / Math.log1p(-failure);
}

/** ln(threshold)/ln(p): the horizon, in steps, of a chain whose steps each succeed with probability `p`. */
export function computeHorizonSteps(p: number, threshold: number): number {
  assertProbability('p (per-step success)', p);
  return computeHorizonFromFailure(1 - p, threshold);
}
