import type { Sandbox } from '../../sandbox/sandbox.js';
import type { WorldRepo } from '../../world/world-repo.js';
import type { VerificationJob, VerificationResult } from '../../queue/verification-job.js';
import { verificationLedgerOf } from './ledger.js';
import { verifyOnTip } from './verify-on-tip.js';

/**
 * One verification on a worker (in process or over BullMQ): the gate of a speculative commit,
 * written into the world's verification ledger before its result is sent, so the lander can
 * check the verdict against the world rather than the message.
 */
export async function runVerification(
  job: VerificationJob,
  deps: { world: WorldRepo; sandbox: Sandbox; worker: string; onWait?: (job: VerificationJob, what: string | null) => void },
): Promise<VerificationResult> {
  const onWait = deps.onWait;
  const verdict = await verifyOnTip(deps.world, deps.sandbox, job, onWait ? (what) => onWait(job, what) : undefined);
  const failure = verdict.ok
    ? { reason: null, message: null, signature: null }
    : { reason: verdict.reason, message: verdict.message, signature: verdict.signature };
  await verificationLedgerOf(deps.world).write(
    {
      version: 1,
      verificationId: job.verificationId,
      episodeId: job.episodeId,
      commit: job.commit,
      tree: await deps.world.treeOf(job.commit),
      onto: job.onto,
      ok: verdict.ok,
      ...failure,
      gate: verdict.gate,
      worker: deps.worker,
      endedAt: new Date().toISOString(),
    },
    verdict.log,
  );
  return { verificationId: job.verificationId, episodeId: job.episodeId, generation: job.generation, commit: job.commit, ok: verdict.ok, ...failure };
}
