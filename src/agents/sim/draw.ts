import { createRng } from '../../reliability/index.js';

/** The rates of the `sim` agent (agent.sim in world.yaml). */
export interface SimRates {
  /** Probability of a visible error: the attempt exits non-zero and writes nothing. */
  e: number;
  /** Probability of a silent error: a plausible wrong answer. */
  w: number;
  /** Probability that a wrong answer is of the kind the world's visible check catches. */
  d: number;
  /** Seed of every draw, an integer in [0, 2^32 − 1]. */
  seed: number;
}

/** What one attempt does: fail visibly, answer right, or answer wrong in a way the check catches or misses. */
export type SimOutcome = 'visible-error' | 'right' | 'wrong-caught' | 'wrong-missed';

export interface SimDraw {
  outcome: SimOutcome;
  /** The uniform draw that chose between visible error, wrong and right. */
  u: number;
  /** How far a wrong answer is off (0 for the others): not a multiple of 10 when caught, a multiple when missed. */
  offset: number;
}

// FNV-1a over the UTF-16 code units: a 32-bit seed per (seed, task, attempt), the same on any machine.
function hashKey(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The draw of one attempt, from its own PRNG stream seeded by (seed, task, attempt): the same
 * attempt always does the same thing, whatever ran before it or in parallel, and attempts are
 * independent of each other, as the reliability model assumes.
 */
export function drawSimAttempt(rates: SimRates, task: string, attempt: number): SimDraw {
  const rng = createRng(hashKey(`${rates.seed}\u0000${task}\u0000${attempt}`));
  const u = rng.next();
  if (u < rates.e) return { outcome: 'visible-error', u, offset: 0 };
  if (u >= rates.e + rates.w) return { outcome: 'right', u, offset: 0 };
  // The visible check compares last digits: an offset of 1..9 changes the last digit, 10..90 keeps it.
  if (rng.next() < rates.d) return { outcome: 'wrong-caught', u, offset: 1 + rng.nextInt(9) };
  return { outcome: 'wrong-missed', u, offset: 10 * (1 + rng.nextInt(9)) };
}
