import type { IntegrationOutcome } from '../../integrate/integration-stage.js';
import { episodeEndEvent } from './events.js';
import { nextWake } from '../run-policy.js';
import { answersTipRequest } from '../tip-reservation.js';
import { apply, checkEvidenceOn, reportBlocked } from './carry-out-commands.js';
import { reserveTip } from './open-run.js';
import { releaseLease } from './start-episodes.js';
import { reconcileIfDue, workerWaitId } from './reconcile.js';
import { rejoinIntegration } from './recover-run.js';
import type { Run, Wake } from './state.js';
import { pollSteering, steered, takeSteering } from './steering.js';

/**
 * Connects the run to what wakes it: results of both stages (pumped into the inbox until the run
 * finishes), an interrupt, and the workers' tip requests. Returns what disconnects the interrupt.
 */
export function listenForWakes(run: Run, signal: AbortSignal | undefined): () => void {
  void pump(run, async () => ({ kind: 'episode', result: await run.queue.nextResult() }));
  void pump(run, async () => ({ kind: 'verification', result: await run.verifications.nextResult() }));
  void pollSteering(run);
  const onAbort = () => run.inbox.push({ kind: 'aborted' });
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  // Workers ask for places only for an episode this run is running, from the base it was given.
  run.distributed?.tips?.serve((c) => (answersTipRequest(run.policy, c, run.jobs.get(c.episodeId)) ? reserveTip(run, c) : Promise.resolve(null)));
  return () => signal?.removeEventListener('abort', onAbort);
}

/**
 * The run loop: the evidence at the start and the changes recovered for integration, then turn
 * after turn until the policy has finished: wait for one wake, let the policy decide on it (through
 * apply, which carries out its commands against the ports), and tick.
 */
export async function runLoop(run: Run): Promise<void> {
  await guardBranch(run);
  await checkEvidenceOn(run, run.startHead);
  await rejoinIntegration(run);
  if (!run.policy.finished) await tick(run);
  // A person's change being verified may give the run new work (a task added, one reopened): it waits for it.
  while (!run.policy.finished || run.steering.size > 0) {
    const { done, tasks, running, tally } = run.policy;
    const { accepted, rejected, failed } = tally;
    if (!run.policy.finished) run.emit({ type: 'progress', done: done.size, tasks: tasks.length, running: [...running.values()], accepted, rejected, failed });
    const wake = nextWake(run.policy);
    const waitMs = Math.min(wake === null ? Infinity : Math.max(0, wake - Date.now()), run.distributed ? (run.distributed.reconcileMs ?? 5_000) : Infinity);
    const next = await run.inbox.next(Number.isFinite(waitMs) ? waitMs : null);
    await guardBranch(run);
    await takeWake(run, next);
    await reconcileIfDue(run);
    if (!run.policy.finished) await tick(run);
  }
}

/** The accepted branch moved by something other than the lander is put back (and its commit quarantined). */
export async function guardBranch(run: Run): Promise<void> {
  const moved = await run.lander.guard();
  if (moved) run.emit({ type: 'foreign-move', commit: moved.foreign, quarantine: moved.quarantine });
}

async function takeWake(run: Run, wake: Wake): Promise<void> {
  switch (wake.kind) {
    case 'episode': {
      // A job stopped mid-wait (aborted, its worker lost) never says its wait ended: its result does.
      endWait(run, wake.result.episodeId);
      endWait(run, workerWaitId(wake.result.episodeId));
      // A claimed pass is judged against the ledger the worker wrote (see forgedResultProblem).
      const record = wake.result.verdict === 'passed' ? await run.ledger.read(wake.result.episodeId) : null;
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

async function tick(run: Run): Promise<void> {
  await applyReviewDecisions(run);
  await apply(run, { type: 'tick', now: Date.now(), retries: await run.world.taskRetries() });
}

async function pump(run: Run, next: () => Promise<Wake>): Promise<void> {
  while (!run.policy.finished) run.inbox.push(await next());
}

/** Decisions people wrote since the last look, fed to the policy; an approved change takes its task's paths again before it joins. */
async function applyReviewDecisions(run: Run): Promise<void> {
  if (run.policy.reviewing.size === 0 || run.policy.stop) return;
  const decisions = await run.world.reviewDecisions();
  for (const [id, waiting] of [...run.policy.reviewing]) {
    const decision = decisions.get(id);
    if (!decision) continue;
    if (decision.decision === 'approve') await run.leases.tryAcquire(id, run.manifest.tasks.find((t) => t.id === waiting.task)?.paths ?? []);
    await apply(run, { type: 'reviewed', id, decision: decision.decision, note: decision.note });
  }
}

function endWait(run: Run, id: string): void {
  const task = run.waits.taskOf(id);
  if (task !== undefined) run.emit({ type: 'wait', id, task, what: null });
}
