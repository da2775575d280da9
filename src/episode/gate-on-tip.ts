import type { WorldRepo } from '../world/world-repo.js';

/** What an episode's gate judges: the change on `onto`, as the tree `tree` and the commit `commit` (whose parent is `onto`). */
export interface GateTarget {
  onto: string;
  tree: string;
  commit: string;
  /** `onto` holds changes not landed yet, whose gates may still be running (else it is the accepted head). */
  speculative?: boolean;
}

/**
 * Asks the integration queue for this change's place: the commit to gate, its
 * change built on the speculative tip (the accepted head plus every change ahead of it, gated or
 * still gating), or null when it cannot go there. In process the run's integration stage answers;
 * over BullMQ the scheduler answers through Redis.
 */
export type ReserveTip = (change: {
  episodeId: string;
  task: string;
  candidate: string;
  base: string;
  /** What the agent reported the episode cost, as its record will say. */
  costUsd?: number | null;
}) => Promise<{ onto: string; commit: string; speculative: boolean } | null>;

/**
 * For an episode whose gate failed on its place's `commit`, what that failure comes to, as the
 * integration queue now stands:
 * - `own`: every change ahead passed on its tip and the place still stands, so the tip is what lands
 *   ahead of the change and the failure is the change's own;
 * - `queue`: the place was rebuilt (a change ahead failed, or the head moved), so the gate judged a
 *   tip that will never land; the change is handed to the queue, which verifies it on its new place
 *   as it verifies every rebuilt change, and that verification is its gate;
 * - null: not known within a bound (a change ahead is still judged), or the queue may not judge it
 *   alone (a person reviews it, or it races): the change is gated again on its own base.
 * It may wait for the changes ahead to be judged.
 * Only the run's own integration stage answers it.
 */
export type PlaceAfterFailure = (change: { episodeId: string; commit: string }) => Promise<'own' | 'queue' | null>;

/**
 * Watches a reserved change's place while its gate runs: the signal is aborted when the place is
 * no longer `commit` (a change ahead failed, the head moved), so the gate is stopped, since what it
 * judges will never land. `release` once the gate ended. Only the run's own integration stage answers it.
 */
export type WatchPlace = (change: { episodeId: string; commit: string }) => { signal: AbortSignal; release(): void };

/** The scheduler's side over a shared queue: answers the workers' requests for a place with `reserve`. */
export interface TipService {
  serve(reserve: ReserveTip): void;
}

/**
 * Where the episode gates its change: on its place in the queue when it got one, so a change that
 * lands in that order is gated once, whatever landed or queued while its agent worked. Null: on its base.
 */
export async function targetOnTip(world: WorldRepo, reserve: ReserveTip | undefined, change: Parameters<ReserveTip>[0]): Promise<GateTarget | null> {
  const place = reserve ? await reserve(change) : null;
  if (!place) return null;
  return { onto: place.onto, tree: await world.treeOf(place.commit), commit: place.commit, speculative: place.speculative };
}
