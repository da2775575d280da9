import { verificationJobSchema, verificationResultSchema, type VerificationJob, type VerificationResult } from '../verification-job.js';
import { failed, type VerificationHandler, type VerificationQueue } from '../verification-queue.js';

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
