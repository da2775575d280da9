import { verificationJobSchema, verificationResultSchema, type VerificationJob, type VerificationResult } from './job.js';
import type { RejectionReason } from '../../errors/rejection-reasons.js';

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

/** The embedded verification pool: gates run in this process, `slots` at a time. */
export class MemoryVerificationQueue implements VerificationQueue {
  private readonly waiting: VerificationJob[] = [];
  private readonly seen = new Set<string>();
  private readonly finished: VerificationResult[] = [];
  private readonly takers: Array<(r: VerificationResult) => void> = [];
  private readonly running = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly handler: VerificationHandler,
    private readonly slots: number,
  ) {}

  async submit(job: VerificationJob): Promise<void> {
    const valid = verificationJobSchema.parse(job);
    if (this.seen.has(valid.verificationId)) return;
    this.seen.add(valid.verificationId);
    if (this.closed) return this.deliver(failed(valid, 'aborted', 'the verification queue was closed'));
    this.waiting.push(valid);
    this.pump();
  }

  nextResult(): Promise<VerificationResult> {
    const ready = this.finished.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  async cancel(ids: readonly string[]): Promise<void> {
    const drop = new Set(ids);
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const job = this.waiting[i]!;
      if (drop.has(job.verificationId) || drop.has(job.episodeId)) this.waiting.splice(i, 1);
    }
  }

  /** An in-process queue cannot lose a job it was given. */
  async ensureSubmitted(): Promise<number> {
    return 0;
  }

  counts(): { waiting: number; active: number } {
    return { waiting: this.waiting.length, active: this.running.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) this.deliver(failed(job, 'aborted', 'the run stopped before this verification started'));
    await Promise.all(this.running.values());
  }

  private pump(): void {
    while (this.running.size < this.slots && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      const work = Promise.resolve()
        .then(() => this.handler(job))
        .then((result) => verificationResultSchema.parse(result))
        .catch((error: unknown) => failed(job, 'worker-error', error instanceof Error ? error.message : String(error)))
        .then((result) => {
          this.running.delete(job.verificationId);
          this.deliver(result);
          this.pump();
        });
      this.running.set(job.verificationId, work);
    }
  }

  private deliver(result: VerificationResult): void {
    const taker = this.takers.shift();
    if (taker) taker(result);
    else this.finished.push(result);
  }
}

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
