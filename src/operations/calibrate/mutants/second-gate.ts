import type { RejectionReason } from '../../../errors/rejection-reasons.js';

/**
 * The time of a second gate for a mutant whose first was rejected for a reason the machine can
 * cause as well as the mutant: the gate running out of its shortened time (a loaded machine slows
 * every step; a mutant that loops forever runs out of any time), or the head failing without the
 * mutant (broken-base: nothing of the mutant was judged). The second gate gets twice the first's
 * time, never more than the gate's own limit; only its verdict counts, so a mutant the tests pass
 * once given time survives instead of being counted caught. Null: the first verdict stands. Pure.
 */
export function secondMutantGateSec(reason: RejectionReason, firstSec: number, gateTimeoutSec: number): number | null {
  if (reason !== 'gate-timeout' && reason !== 'broken-base') return null;
  return Math.min(gateTimeoutSec, 2 * firstSec);
}
