import { nextWake, type PolicyEvent } from '../../run-policy.js';
import { answersTipRequest } from '../../tip-reservation.js';
import { apply } from '../decide/apply.js';
import { rejoinIntegration } from '../carry-out/episode-results.js';
import { checkEvidenceOn } from '../carry-out/evidence.js';
import { guardBranch } from '../carry-out/guard-branch.js';
import { reserveTip } from '../carry-out/reserve-tip.js';
import type { Run, Wake } from '../ports/state.js';
import { reconcileIfDue } from '../wakes/reconcile.js';
import { applyReviewDecisions } from '../wakes/review-decisions.js';
import { pollSteering } from '../wakes/steering.js';
import { takeWake } from '../wakes/take-wake.js';

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
  await checkEvidenceOn(run, run.startHead, (event: PolicyEvent) => apply(run, event));
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

async function tick(run: Run): Promise<void> {
  await applyReviewDecisions(run);
  await apply(run, { type: 'tick', now: Date.now(), retries: await run.world.taskRetries() });
}

async function pump(run: Run, next: () => Promise<Wake>): Promise<void> {
  while (!run.policy.finished) run.inbox.push(await next());
}
