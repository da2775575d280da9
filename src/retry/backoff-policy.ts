import { GenesisError } from '../errors/genesis-error.js';

/**
 * How long to wait before each retry of something that failed for a transient reason: the one
 * rule behind every retry in Genesis (a model endpoint, a push to a mirror, a sandbox that raced a
 * mount, a task whose episode met an outage). Exponential, capped, with jitter so that many
 * waiters do not come back at the same instant. Pure: the random draw is passed in, so a test (or
 * the pure run policy) gets the same waits for the same draws.
 */
export interface BackoffPolicy {
  /** Wait before the first retry (ms). */
  readonly initialMs: number;
  /** Each wait is this many times the one before. @default 2 */
  readonly factor: number;
  /** No wait is longer (ms). */
  readonly maxMs: number;
  /**
   * Share of each wait taken off at random, in [0, 1]: with 0.5 a wait of 8 s becomes one in
   * (4 s, 8 s]. 0 gives the exact exponential sequence. @default 0
   */
  readonly jitter: number;
  /** Retries before giving up: the first try is not one. @default Infinity */
  readonly maxRetries: number;
}

/** A policy from its parts, checked: a bad one is a programming error caught at construction. */
export function backoffPolicy(input: Partial<BackoffPolicy> & Pick<BackoffPolicy, 'initialMs' | 'maxMs'>): BackoffPolicy {
  const policy: BackoffPolicy = { factor: 2, jitter: 0, maxRetries: Infinity, ...input };
  const problems = [
    !(Number.isFinite(policy.initialMs) && policy.initialMs >= 0) && `initialMs must be a finite number >= 0, got ${policy.initialMs}`,
    !(Number.isFinite(policy.maxMs) && policy.maxMs >= policy.initialMs) && `maxMs must be finite and >= initialMs, got ${policy.maxMs}`,
    !(Number.isFinite(policy.factor) && policy.factor >= 1) && `factor must be a finite number >= 1, got ${policy.factor}`,
    !(policy.jitter >= 0 && policy.jitter <= 1) && `jitter must be in [0, 1], got ${policy.jitter}`,
    !((Number.isInteger(policy.maxRetries) && policy.maxRetries >= 0) || policy.maxRetries === Infinity) &&
      `maxRetries must be an integer >= 0 or Infinity, got ${policy.maxRetries}`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) throw new GenesisError('invalid-argument', `invalid backoff policy: ${problems.join('; ')}`);
  return policy;
}

/**
 * The wait (whole ms) before retry number `retry` (1 for the first), or null when the policy gives
 * up. `draw` is a uniform number in [0, 1): Math.random, or a seeded generator's next().
 */
export function backoffDelay(policy: BackoffPolicy, retry: number, draw: number): number | null {
  if (!Number.isInteger(retry) || retry < 1) throw new GenesisError('invalid-argument', `retry must be an integer >= 1, got ${retry}`);
  if (retry > policy.maxRetries) return null;
  // Past the cap the power only overflows; the cap is reached long before 2^1024.
  const grown = policy.initialMs * policy.factor ** Math.min(retry - 1, 1_000);
  const capped = Math.min(policy.maxMs, Number.isFinite(grown) ? grown : policy.maxMs);
  return Math.round(capped * (1 - policy.jitter * Math.min(Math.max(draw, 0), 1)));
}
