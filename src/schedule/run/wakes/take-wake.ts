import type { IntegrationOutcome } from '../../../integrate/integration-stage.js';
import { apply } from '../decide/apply.js';
import { reportBlocked } from '../carry-out/episode-end.js';
import { releaseLease } from '../carry-out/start-episodes.js';
import { endWait } from '../carry-out/waits.js';
import { episodeEndEvent } from '../ports/events.js';
import type { Run, Wake } from '../ports/state.js';
import { workerWaitId } from './reconcile.js';
import { steered, takeSteering } from './steering.js';

/** One wake, handled: a stage's result or outcome, an interrupt, a person's request; the clock needs nothing here. */
export async function takeWake(run: Run, wake: Wake): Promise<void> {
  switch (wake.kind) {
    case 'episode': {
      // A job stopped mid-wait (aborted, its worker lost) never says its wait ended: its result does.
      endWait(run, wake.result.episodeId);
      endWait(run, workerWaitId(wake.result.episodeId));
      // A claimed pass (or a change claimed handed to the queue) is judged against the ledger the worker wrote (see forgedResultProblem).
      const claims = wake.result.verdict === 'passed' || wake.result.verdict === 'queued';
      const record = claims ? await run.ledger.read(wake.result.episodeId) : null;
      return apply(run, { type: 'result', result: wake.result, record });
    }
    case 'verification':
      endWait(run, wake.result.verificationId);
      return run.stage.verified(wake.result);
    case 'integrated':
      return integrated(run, wake.outcome);
    case 'aborted':
      return apply(run, { type: 'aborted' });
    case 'steer':
      return takeSteering(run);
    case 'steered':
      return steered(run, wake.id, wake.outcome);
    case 'tick':
      return;
  }
}

/** A change left the integration queue: landed (the manifest at the new head is read) or rejected. */
async function integrated(run: Run, outcome: IntegrationOutcome): Promise<void> {
  const final = outcome.record;
  await releaseLease(run, final);
  run.emit(episodeEndEvent(final));
  run.tracer?.episodeEnded(final);
  if (outcome.type === 'landed') {
    run.manifest = await run.world.manifestAt(outcome.head);
    await apply(run, { type: 'landed', task: final.task, tasks: run.manifest.tasks, ratchet: run.manifest.verify.mode === 'ratchet' });
  }
  await apply(run, { type: 'finished', record: final, now: Date.now() });
  if (outcome.type !== 'landed') reportBlocked(run, final);
}
