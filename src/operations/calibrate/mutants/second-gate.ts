import type { RejectionReason } from '../../../errors/rejection-reasons.js';

/**
 * The time of a second gate for a mutant whose first was rejected `broken-base`: the head failed
 * without the mutant, so nothing of the mutant was judged, and a loaded machine can cause that
 * (the head's tests ran out of time on the base as well). The second gate gets twice the first's
 * time, never more than the gate's own limit; only its verdict counts. A mutant that ran out of
 * its time is not gated again here: its gate already ran the step again with twice the time
 * (the gate's onlyTimeouts mode). Null: the first verdict stands. Pure.
 */
export function secondMutantGateSec(reason: RejectionReason, firstSec: number, gateTimeoutSec: number): number | null {
  if (reason !== 'broken-base') return null;
  return Math.min(gateTimeoutSec, 2 * firstSec);
}
