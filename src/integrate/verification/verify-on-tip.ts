import { verifyCandidate } from '../../gate/verify-candidate.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { GateRecord } from '../../ledger/episode-record.js';
import type { WorldRepo } from '../../world/world-repo.js';
import type { VerificationJob } from '../../queue/verification-job.js';
import type { RejectionReason } from '../../errors/rejection-reasons.js';

export type TipVerdict =
  | { ok: true; gate: GateRecord; log: string }
  | { ok: false; reason: RejectionReason; message: string; signature: string; gate: GateRecord | null; log: string };

/**
 * The gate of a speculative commit: its tree against the rules of the commit it extends (its
 * manifest, protected files, and the checks of every task done there, those queued ahead
 * included). A failure the tip has without this change is `broken-base`.
 */
export async function verifyOnTip(world: WorldRepo, sandbox: Sandbox, job: VerificationJob, onWait?: (what: string | null) => void): Promise<TipVerdict> {
  const manifest = await world.manifestAt(job.onto);
  const task = manifest.tasks.find((t) => t.id === job.task);
  if (!task)
    return { ok: false, reason: 'task-removed', message: `task ${job.task} is no longer in world.yaml`, signature: 'task-removed', gate: null, log: '' };
  const [tree, ontoTree] = await Promise.all([world.treeOf(job.commit), world.treeOf(job.onto)]);
  const done = await world.doneTasks(manifest.branch, job.onto);
  const verdict = await verifyCandidate({
    world,
    sandbox,
    head: job.onto,
    headManifest: manifest,
    fromTree: ontoTree,
    candidateTree: tree,
    task,
    doneTasks: done,
    name: job.verificationId,
    baseTree: ontoTree,
    ...(onWait ? { onWait } : {}),
  });
  if (verdict.ok) return { ok: true, gate: verdict.gate, log: verdict.log };
  return { ok: false, reason: verdict.reason, message: verdict.message, signature: verdict.signature, gate: verdict.gate, log: verdict.log };
}
