import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldRepo } from '../world/world-repo.js';
import type { VerificationJob, VerificationResult } from './verification-job.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

/**
 * The port between the integration stage (which submits speculative commits to verify) and the
 * workers that run gates. Contract, shared by the in-process and BullMQ adapters:
 * - `submit` is idempotent by `verificationId`; jobs and results are validated on both sides.
 * - Every submitted job yields exactly one result from `nextResult`, also when its worker failed
 *   (`ok: false`, reason `worker-error`) or the queue closed under it (reason `aborted`).
 * - `cancel` drops jobs not yet started (their results will not be wanted); running ones finish.
 * - `ensureSubmitted` puts back every job whose result is still owed and that the queue lost (a
 *   Redis restart loses its last second of writes); the run loop calls it as it reconciles episodes.
 * - A result is a hint: the lander trusts only the verification record the worker wrote into the world.
 */
export interface VerificationQueue {
  submit(job: VerificationJob): Promise<void>;
  nextResult(): Promise<VerificationResult>;
  cancel(verificationIds: readonly string[]): Promise<void>;
  /** Resolves with how many lost jobs were put back. */
  ensureSubmitted(): Promise<number>;
  close(): Promise<void>;
}

export type VerificationHandler = (job: VerificationJob) => Promise<VerificationResult>;

/**
 * What gates one speculative commit on a worker and records its verdict in the world (src/integrate
 * has the one there is); the worker's adapter is given it, so the queue layer needs no integration code.
 */
export type VerificationRunner = (
  job: VerificationJob,
  deps: { world: WorldRepo; sandbox: Sandbox; worker: string; onWait?: (job: VerificationJob, what: string | null) => void },
) => Promise<VerificationResult>;

/** The result of a job that never ran to its end (the queue closed, its worker failed or was lost): a rejection, never a pass. */
export function failed(job: VerificationJob, reason: RejectionReason, message: string): VerificationResult {
  return {
    verificationId: job.verificationId,
    episodeId: job.episodeId,
    generation: job.generation,
    commit: job.commit,
    ok: false,
    reason,
    message,
    signature: `verification-${reason}`,
  };
}
