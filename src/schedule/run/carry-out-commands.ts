import { checkEvidence } from '../../gate/evidence.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { episodeEndEvent } from './events.js';
import { decide, taskStatuses, type PolicyCommand, type PolicyEvent, type WorldHold } from '../run-policy.js';
import { closeEpisode, closeOutrun, closeReview, dropResult, integrateChange, parkForReview, refuseResult } from './episode-results.js';

import { openEpisodes, releaseLease, reportLeaseWaits, submitEpisode } from './start-episodes.js';
import type { Run } from './state.js';
import { writeWorldHold } from './world-hold.js';

/** Feeds one event to the policy and carries out the commands it decides, each before the next (what they cause is fed back at once). */
export async function apply(run: Run, event: PolicyEvent): Promise<void> {
  if (event.type === 'started' || event.type === 'finished') run.records.set(event.record.id, event.record);
  const decision = decide(run.policy, event);
  run.policy = decision.state;
  for (const command of decision.commands) await carryOut(run, command);
}

/** One policy command, turned into calls on the ports. */
async function carryOut(run: Run, command: PolicyCommand): Promise<void> {
  switch (command.type) {
    case 'start': {
      const { opened, refused } = await openEpisodes(run, command);
      for (const episode of opened) {
        await apply(run, { type: 'started', record: episode.record });
        await submitEpisode(run, episode);
      }
      await apply(run, { type: 'starts-done', now: Date.now(), refused });
      return reportLeaseWaits(run, refused);
    }
    case 'withdraw-changes':
      for (const id of await run.stage.withdrawAll()) await apply(run, { type: 'withdrawn', id });
      return;
    case 'stop-episodes':
      await stopEpisodes(run);
      return apply(run, { type: 'tick', now: Date.now() });
    case 'check-evidence':
      return checkEvidenceOn(run, run.lander.head!);
    case 'drop-result':
      return dropResult(run, command.id);
    case 'integrate':
      return integrateChange(run, command.change);
    case 'park':
      return parkForReview(run, command.change);
    case 'close-review':
      return ended(run, await closeReview(run, command.id, command.note), null);
    case 'refuse-result':
      return ended(run, await refuseResult(run, command.id, command.record, command.closing), null);
    case 'close-episode':
      return ended(run, await closeEpisode(run, command.result), command.fatal, command.hold);
    case 'stop-racers':
      // Their results still arrive (abandoned), and the policy closes each as outrun.
      await Promise.all(command.ids.map((id) => run.queue.cancel(id)));
      return;
    case 'outrun':
      return ended(run, await closeOutrun(run, command.id, command.winner), null);
    case 'finish':
      // The policy holds its stop reason as finished: the loop ends after this turn.
      return;
  }
}

/** Runs the goal's evidence command on `head` (when the manifest names one) and tells the policy. */
export async function checkEvidenceOn(run: Run, head: string): Promise<void> {
  const command = run.manifest.goal.evidence;
  if (!command) return;
  // Nothing starts or lands while it runs (it decides whether the goal is reached): a long one is told, as other waits are.
  const wait = { type: 'wait', id: `evidence-${head}`, task: 'the run' } as const;
  run.emit({ ...wait, what: `the goal's evidence "${command}" on ${head.slice(0, 12)}` });
  const verdict = await checkEvidence(run.world, run.sandbox, run.manifest, head).finally(() => run.emit({ ...wait, what: null }));
  if (!verdict) return;
  run.evidence = { command, passed: verdict.ok };
  run.emit({ type: 'evidence', commit: head, passed: verdict.ok, command });
  await apply(run, { type: 'evidence', passed: verdict.ok, command });
}

/** Tells the episodes to stop, once. In process, closing the queue aborts the agents; their results (abandoned) still arrive through the inbox. */
export async function stopEpisodes(run: Run): Promise<void> {
  if (run.episodesStopped) return;
  run.episodesStopped = true;
  if (!run.distributed) await run.queue.close();
}

/**
 * An episode ended for good: its lease and its result are let go, and the policy learns of its final
 * record. A new hold of the world (a usage limit) is told and written for `genesis status`.
 */
async function ended(run: Run, final: EpisodeRecord, fatal: { reason: string; message: string } | null, hold: WorldHold | null = null): Promise<void> {
  await releaseLease(run, final);
  await run.queue.acknowledge(final.id);
  run.emit(episodeEndEvent(final));
  run.tracer?.episodeEnded(final);
  const before = run.policy.hold;
  await apply(run, { type: 'finished', record: final, fatal, hold, now: Date.now() });
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
