import type { EpisodeRecord, GateStepRecord } from '../ledger/episode-record.js';

/** The gate step that runs a world's hidden holdout checks. */
export const HOLDOUT_STEP = 'holdout';

/** A step whose output is hidden: marked so by the gate, or named as the holdout step (records written before the mark). */
export function isHiddenStep(step: Pick<GateStepRecord, 'name' | 'hidden'>): boolean {
  return step.hidden === true || step.name === HOLDOUT_STEP || step.name.startsWith(`${HOLDOUT_STEP} `);
}

/**
 * Whether anything of an episode's gate may come from hidden checks, so none of its gate log may
 * reach a prompt. Decided from what the gate did, not from a list of reason codes: its gate ran a
 * hidden step, or its reason belongs to the holdout family whatever prefix a later stage adds
 * (`holdout-failed`, `replay-holdout-failed`, `holdout-copy-failed`, …).
 */
export function isHoldoutDerived(episode: Pick<EpisodeRecord, 'reason' | 'gate'>): boolean {
  if (episode.gate?.steps.some(isHiddenStep)) return true;
  return /(^|[-:_ ])holdout([-:_ ]|$)/i.test(episode.reason ?? '');
}
