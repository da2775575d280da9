import type { ReserveTip } from '../../../episode/gate-on-tip.js';
import { reservesTips } from '../../tip-reservation.js';
import type { Run } from '../ports/state.js';

/**
 * Takes a change's place in the integration queue for its gate, when the policy gives places (see
 * reservesTips): asked by an episode in this process when its agent finished, and by a worker's tip
 * request in a distributed run.
 */
export function reserveTip(run: Run, change: Parameters<ReserveTip>[0]): ReturnType<ReserveTip> {
  if (!reservesTips(run.policy, change.episodeId)) return Promise.resolve(null);
  return run.stage.reserve({
    id: change.episodeId,
    task: change.task,
    candidate: change.candidate,
    base: change.base,
    ...(change.costUsd === undefined ? {} : { costUsd: change.costUsd }),
  });
}
