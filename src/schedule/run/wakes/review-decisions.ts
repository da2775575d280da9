import { apply } from '../decide/apply.js';
import type { Run } from '../ports/state.js';

/** Decisions people wrote since the last look, fed to the policy; an approved change takes its task's paths again before it joins. */
export async function applyReviewDecisions(run: Run): Promise<void> {
  if (run.policy.reviewing.size === 0 || run.policy.stop) return;
  const decisions = await run.world.reviewDecisions();
  for (const [id, waiting] of [...run.policy.reviewing]) {
    const decision = decisions.get(id);
    if (!decision) continue;
    if (decision.decision === 'approve') await run.leases.tryAcquire(id, run.manifest.tasks.find((t) => t.id === waiting.task)?.paths ?? []);
    await apply(run, { type: 'reviewed', id, decision: decision.decision, note: decision.note });
  }
}
