import { decide, type PolicyCommand, type PolicyEvent } from '../../run-policy.js';
import type { Run } from '../ports/state.js';
import { endEpisode } from '../carry-out/episode-end.js';
import { closeEpisode, closeOutrun, closeReview, dropResult, integrateChange, parkForReview, refuseResult } from '../carry-out/episode-results.js';
import { checkEvidenceOn } from '../carry-out/evidence.js';
import { openEpisodes, reportLeaseWaits, submitEpisode } from '../carry-out/start-episodes.js';
import { stopEpisodes } from '../carry-out/stop-episodes.js';

/** Feeds one event to the policy and carries out the commands it decides, each before the next (what they cause is fed back at once). */
export async function apply(run: Run, event: PolicyEvent): Promise<void> {
  if (event.type === 'started' || event.type === 'finished') run.records.set(event.record.id, event.record);
  const decision = decide(run.policy, event);
  run.policy = decision.state;
  for (const command of decision.commands) await carryOut(run, command);
}

/** One policy command, turned into calls on the ports. */
async function carryOut(run: Run, command: PolicyCommand): Promise<void> {
  const feed = (event: PolicyEvent) => apply(run, event);
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
      return checkEvidenceOn(run, run.lander.head!, feed);
    case 'drop-result':
      return dropResult(run, command.id);
    case 'integrate':
      return integrateChange(run, command.change);
    case 'park':
      return parkForReview(run, command.change);
    case 'close-review':
      return endEpisode(run, await closeReview(run, command.id, command.note), feed, null);
    case 'refuse-result':
      return endEpisode(run, await refuseResult(run, command.id, command.record, command.closing), feed, null);
    case 'close-episode':
      return endEpisode(run, await closeEpisode(run, command.result), feed, command.fatal, command.hold);
    case 'stop-racers':
      // Their results still arrive (abandoned), and the policy closes each as outrun.
      await Promise.all(command.ids.map((id) => run.queue.cancel(id)));
      return;
    case 'outrun':
      return endEpisode(run, await closeOutrun(run, command.id, command.winner), feed, null);
    case 'finish':
      // The policy holds its stop reason as finished: the loop ends after this turn.
      return;
  }
}
