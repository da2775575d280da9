import { ZodError } from 'zod';
import { isGenesisError } from '../../errors/genesis-error.js';
import { errorTraits, isErrorCode } from '../../errors/error-codes.js';
import type { EpisodeReason } from '../../errors/rejection-reasons.js';
import { episodeJobSchema, episodeResultSchema, type EpisodeJob, type EpisodeResult } from '../../episode/episode-job.js';
import type { EpisodeHandler, EpisodeQueue } from '../episode-queue.js';

/**
 * The embedded single-process queue: jobs run in this process with a fixed concurrency. It is the
 * default for one machine, not a test double; its contract is the same as the BullMQ adapter's.
 */
export class MemoryEpisodeQueue implements EpisodeQueue {
  private readonly waiting: EpisodeJob[] = [];
  private readonly seen = new Set<string>();
  private readonly finished: EpisodeResult[] = [];
  private readonly takers: Array<(result: EpisodeResult) => void> = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /** Each running job's own abort, for cancel: the queue's close aborts them all. */
  private readonly aborts = new Map<string, AbortController>();

  constructor(
    private readonly handler: EpisodeHandler,
    private readonly concurrency: number,
  ) {}

  async submit(job: EpisodeJob): Promise<void> {
    const valid = episodeJobSchema.parse(job);
    if (this.seen.has(valid.episodeId)) return;
    if (this.abort.signal.aborted) {
      this.seen.add(valid.episodeId);
      this.deliver(abandonedResult(valid, 'the queue was closed when the episode was submitted'));
      return;
    }
    this.seen.add(valid.episodeId);
    this.waiting.push(valid);
    this.pump();
  }

  nextResult(): Promise<EpisodeResult> {
    const ready = this.finished.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  counts(): { waiting: number; active: number } {
    return { waiting: this.waiting.length, active: this.running.size };
  }

  /** In process, a delivered result is never owed again. */
  async acknowledge(_episodeId: string): Promise<void> {}

  /** An in-process queue cannot lose a job it was given. */
  async ensureSubmitted(_job: EpisodeJob): Promise<boolean> {
    return false;
  }

  async cancel(episodeId: string): Promise<void> {
    const at = this.waiting.findIndex((j) => j.episodeId === episodeId);
    if (at >= 0) {
      const [job] = this.waiting.splice(at, 1);
      this.deliver(stoppedBeforeStart(job!));
      return;
    }
    this.aborts.get(episodeId)?.abort();
  }

  async close(): Promise<void> {
    this.abort.abort();
    for (const job of this.waiting.splice(0)) this.deliver(abandonedResult(job, 'the queue closed before the episode started'));
    await Promise.all(this.running.values());
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.waiting.length > 0 && !this.abort.signal.aborted) {
      const job = this.waiting.shift()!;
      const own = new AbortController();
      this.aborts.set(job.episodeId, own);
      const signal = AbortSignal.any([this.abort.signal, own.signal]);
      // A handler that throws before returning a promise still yields exactly one result.
      const work = Promise.resolve()
        .then(() => this.handler(job, signal))
        .then((result) => episodeResultSchema.parse(result))
        .catch((error: unknown) => workerError(job, error))
        .then((result) => {
          this.running.delete(job.episodeId);
          this.aborts.delete(job.episodeId);
          this.deliver(result);
          this.pump();
        });
      this.running.set(job.episodeId, work);
    }
  }

  private deliver(result: EpisodeResult): void {
    const taker = this.takers.shift();
    if (taker) taker(result);
    else this.finished.push(result);
  }
}

/** A result for an episode that did not run to its end and is nobody's failure (not charged). */
export function abandonedResult(job: EpisodeJob, message: string, reason: EpisodeReason = 'aborted'): EpisodeResult {
  return {
    episodeId: job.episodeId,
    task: job.task,
    attempt: job.attempt,
    base: job.base,
    candidate: null,
    verdict: 'abandoned',
    reason,
    message,
    signature: null,
  };
}

/** The result of a job stopped (cancelled) before any worker started it: both queues give the same one. */
export function stoppedBeforeStart(job: EpisodeJob): EpisodeResult {
  return abandonedResult(job, 'the episode was stopped before it started');
}

export function workerError(job: EpisodeJob, error: unknown): EpisodeResult {
  const message =
    error instanceof ZodError
      ? `the worker returned a malformed result: ${error.issues
          .map((i) => `${i.path.join('.')}: ${i.message}`)
          .slice(0, 3)
          .join('; ')}`
      : error instanceof Error
        ? error.message
        : String(error);
  const raw = error instanceof Error && 'code' in error ? String((error as { code: unknown }).code) : 'worker-error';
  // Only a registered code says what the failure means; anything else (a bug, an ENOENT) is the worker's error.
  const code = isGenesisError(error) && isErrorCode(error.code) ? error.code : null;
  // Read from the table, not the error's getters: an error rebuilt from another copy of the module has none.
  const traits = code ? errorTraits(code) : null;
  // The circuit breaker's input: an agent or a sandbox that cannot start will not start for the next episode either.
  const fatal = traits?.fatal ?? false;
  // An outage of the machine (Docker down, Redis gone) or a configuration mistake is not the task's failure: not charged to it.
  const verdict = traits && !traits.charged ? 'abandoned' : 'failed';
  const reason: EpisodeReason = code ?? 'worker-error';
  // A fatal error stops the run at once; its hint says what to fix.
  const hint = fatal && isGenesisError(error) && error.hint ? ` (${error.hint})` : '';
  return {
    episodeId: job.episodeId,
    task: job.task,
    attempt: job.attempt,
    base: job.base,
    candidate: null,
    verdict,
    reason,
    message: `${message}${hint}`,
    signature: `worker-error:${raw}`,
    fatal,
  };
}
