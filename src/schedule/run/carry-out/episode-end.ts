import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import { taskStatuses, type WorldHold } from '../../run-policy.js';
import { episodeEndEvent } from '../ports/events.js';
import type { Decide, Run } from '../ports/state.js';
import { releaseLease } from './start-episodes.js';
import { writeWorldHold } from './world-hold.js';

/**
 * An episode ended for good: its lease and its result are let go, and the policy learns of its final
 * record. A new hold of the world (a usage limit) is told and written for `genesis status`.
 */
export async function endEpisode(
  run: Run,
  final: EpisodeRecord,
  decide: Decide,
  fatal: { reason: string; message: string } | null,
  hold: WorldHold | null = null,
): Promise<void> {
  await releaseLease(run, final);
  await run.queue.acknowledge(final.id);
  run.emit(episodeEndEvent(final));
  run.tracer?.episodeEnded(final);
  const before = run.policy.hold;
  await decide({ type: 'finished', record: final, fatal, hold, now: Date.now() });
  reportBlocked(run, final);
  const after = run.policy.hold;
  if (after && after !== before) {
    run.emit({ type: 'hold', untilMs: after.untilMs, message: after.message });
    await writeWorldHold(run.world.scratchDir, after).catch(() => undefined);
  }
}

/** Tells when the episode that just ended left its task blocked (its last attempt, or a repeated failure). */
export function reportBlocked(run: Run, final: EpisodeRecord): void {
  const status = taskStatuses(run.policy).get(final.task);
  if (status?.state !== 'blocked') return;
  run.emit({ type: 'task-blocked', task: final.task, failures: status.failures, reason: status.lastReason, message: status.lastMessage });
}
