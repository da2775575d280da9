import type { PolicyState } from './run-policy.js';

/**
 * Whether a change may take its place in the integration queue before its own gate (ReserveTip).
 * Not in a ratchet world (the episode's score goes into the trailer of what lands, known only
 * after its gate), not once the run has finished, and not for a racer (`episodeId` of a race): its
 * fellow racers change the same paths, so a place behind one of them would verify the winner on a
 * tip holding a loser's change, which conflicts with it. A racer gates on its base; the winner joins the queue then.
 */
export function reservesTips(state: PolicyState, episodeId?: string): boolean {
  if (episodeId !== undefined && [...state.races.values()].some((race) => race.racers.includes(episodeId))) return false;
  return !state.config.ratchet && state.finished === null;
}

/**
 * Whether a worker elsewhere asking for a place gets one: only for an episode this run is running,
 * for its task, from the base the run gave it (`given`: the job the run submitted).
 */
export function answersTipRequest(
  state: PolicyState,
  request: { episodeId: string; task: string; base: string },
  given: { base: string } | undefined,
): boolean {
  return reservesTips(state, request.episodeId) && state.running.get(request.episodeId) === request.task && given?.base === request.base;
}
