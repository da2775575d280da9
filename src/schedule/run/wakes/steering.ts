import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { carryOutSteering, type SteeringOutcome } from '../../../operations/carry-out-steering.js';
import { isAlive } from '../../../sandbox/process/process-alive.js';
import type { PendingSteering } from '../../../world/steering-requests.js';
import { apply } from '../decide/apply.js';
import { guardBranch } from '../carry-out/guard-branch.js';
import type { Run } from '../ports/state.js';

/** How often the run looks for requests of people (`genesis amend`, `task add`, `task reopen` from another process). */
const POLL_MS = 500;

/**
 * Wakes the loop when a person's request waits in the world (steering-requests.ts): the ref store
 * is read without a git process, so polling costs next to nothing.
 */
export async function pollSteering(run: Run): Promise<void> {
  while (!run.loopEnded) {
    await sleep(POLL_MS, undefined, { ref: false });
    if (run.loopEnded || run.policy.closing) return;
    const waiting = await run.world.steeringRequests().catch(() => []);
    if (waiting.some((p) => !run.steering.has(p.request.id))) run.inbox.push({ kind: 'steer' });
  }
}

/**
 * Takes every request waiting: claimed by compare-and-swap (the waiting command may withdraw it
 * meanwhile), answered `taken`, then carried out by the integration stage between two landings,
 * through the lander. The loop goes on meanwhile; the outcome comes back as a `steered` wake.
 */
export async function takeSteering(run: Run): Promise<void> {
  for (const pending of await run.world.steeringRequests()) {
    const { request } = pending;
    if (run.steering.has(request.id)) continue;
    // Nobody waits for it any more (the command was killed): it never lands behind a person's back.
    if (request.from.host === hostname() && !isAlive(request.from.pid)) {
      await run.world.takeSteeringRequest(pending);
      continue;
    }
    if (!(await run.world.takeSteeringRequest(pending))) continue;
    run.steering.set(
      request.id,
      carryOut(run, pending).catch(() => undefined),
    );
  }
}

async function carryOut(run: Run, pending: PendingSteering): Promise<void> {
  const { request } = pending;
  const by = `${hostname()}:${process.pid}`;
  const answer = (state: 'taken' | 'done', outcome?: SteeringOutcome) =>
    run.world.writeSteeringAnswer({ version: 1, id: request.id, state, by, at: new Date().toISOString(), ...(outcome ? { outcome } : {}) });
  await answer('taken');
  run.emit({ type: 'steering', id: request.id, kind: request.kind, by: request.by, state: 'taken', commit: null, message: null });
  const outcome = await run.stage
    .exclusive(async () => {
      // A push behind Genesis's back is put back first: the change is built on the head the lander holds.
      await guardBranch(run);
      return carryOutSteering(run.world, request, {
        sandboxFor: async () => run.sandbox,
        // Only from the head the lander holds: a foreign move it has not put back yet is never built on.
        land: async (commit, expected) => expected === run.lander.head && (await run.lander.swap(commit, expected)),
      });
    })
    .catch((error: unknown): SteeringOutcome => ({ ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } }));
  await answer('done', outcome);
  const commit = outcome.ok ? outcome.result.commit : null;
  const refused = outcome.ok && outcome.kind === 'amend' && !outcome.result.verdict.ok ? outcome.result.verdict : null;
  const message = !outcome.ok ? outcome.error.message : refused && !refused.ok ? `${refused.reason}: ${refused.message}` : null;
  run.emit({ type: 'steering', id: request.id, kind: request.kind, by: request.by, state: 'done', commit, message });
  run.inbox.push({ kind: 'steered', id: request.id, outcome });
}

/** A request was carried out: the policy learns the new head's tasks and done tasks (a new task starts, a reopened one is pending again). */
export async function steered(run: Run, id: string, outcome: SteeringOutcome): Promise<void> {
  run.steering.delete(id);
  if (!outcome.ok || !outcome.result.commit) return;
  const head = run.lander.head!;
  run.manifest = await run.world.manifestAt(head);
  const done = await run.world.doneTasks(run.manifest.branch, head);
  await apply(run, { type: 'steered', tasks: run.manifest.tasks, done, ratchet: run.manifest.verify.mode === 'ratchet' });
}

/** Requests still being carried out when the loop ends are finished first: their commands wait for the answer. */
export async function settleSteering(run: Run): Promise<void> {
  await Promise.all(run.steering.values());
}
