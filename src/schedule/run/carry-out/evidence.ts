import { checkEvidence } from '../../../gate/evidence.js';
import type { Decide, Run } from '../ports/state.js';

/** Runs the goal's evidence command on `head` (when the manifest names one) and tells the policy. */
export async function checkEvidenceOn(run: Run, head: string, decide: Decide): Promise<void> {
  const command = run.manifest.goal.evidence;
  if (!command) return;
  // Nothing starts or lands while it runs (it decides whether the goal is reached): a long one is told, as other waits are.
  const wait = { type: 'wait', id: `evidence-${head}`, task: 'the run' } as const;
  run.emit({ ...wait, what: `the goal's evidence "${command}" on ${head.slice(0, 12)}` });
  const verdict = await checkEvidence(run.world, run.sandbox, run.manifest, head).finally(() => run.emit({ ...wait, what: null }));
  if (!verdict) return;
  run.evidence = { command, passed: verdict.ok };
  run.emit({ type: 'evidence', commit: head, passed: verdict.ok, command });
  await decide({ type: 'evidence', passed: verdict.ok, command });
}
