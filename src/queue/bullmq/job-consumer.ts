import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { episodeResultSchema, type EpisodeResult } from '../../episode/episode-job.js';
import { distributedJobSchema, EPISODE_QUEUE, queuePrefix, RETENTION, type DistributedJob } from './distributed-job.js';
import { stoppedBeforeStart, workerError } from '../memory/memory-queue.js';
import { cancelRequested } from './cancel-requests.js';
import { closeWithin } from './close-within.js';
import { STALLS_ALLOWED } from './stalled-jobs.js';

/** Timing and size of a BullMQ worker of Genesis. */
export interface ConsumerSettings {
  redis: Redis;
  concurrency: number;
  /** How long a job stays locked without renewal: a killed worker's job restarts after about this. @default 30 s */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. @default 30 s */
  stalledIntervalMs?: number;
  /** How often the running episodes are checked for a request to stop them (see cancel-requests). @default 1 s */
  cancelPollMs?: number;
}

/** What runs one episode job on a worker; `signal` aborts when the worker is closed with `force` or the scheduler stops the job. */
export type DistributedEpisodeHandler = (data: DistributedJob, signal: AbortSignal) => Promise<EpisodeResult>;

export interface EpisodeConsumer {
  /** The episodes running now. */
  running(): string[];
  /** Finishes the running episodes, then stops; with `force`, aborts them and hands their jobs back. */
  close(force?: boolean): Promise<void>;
}

/** A job that ran before on another worker (stalled, killed, or handed back) and is taken over now. */
export interface TakenFrom {
  /** The worker that took it last, when known. */
  worker: string | null;
}

// A day: longer than any episode's job lives in the queue, so the key is there when the job comes back.
const TAKER_TTL_MS = 86_400_000;

/**
 * Notes this worker as the job's taker and says whether it takes it over: a taker other than this
 * one was noted before, or BullMQ started the job before (a taker whose note expired).
 */
/** Where the id of the worker that last took an episode's job is kept (for a day). */
export function takerKey(episodeId: string): string {
  return `${queuePrefix()}:episode-taker:${episodeId}`;
}

async function noteTaker(redis: Redis, episodeId: string, workerId: string, attemptsStarted: number): Promise<TakenFrom | null> {
  const previous = await redis.set(takerKey(episodeId), workerId, 'PX', TAKER_TTL_MS, 'GET').catch(() => null);
  if (previous && previous !== workerId) return { worker: previous };
  return attemptsStarted > 1 ? { worker: null } : null;
}

/** BullMQ worker options shared by the episode, verification and calibration workers; each blocks on a connection of its own. */
export function workerSettings(connection: Redis, settings: ConsumerSettings) {
  return {
    connection,
    prefix: queuePrefix(),
    concurrency: settings.concurrency,
    lockDuration: settings.lockDurationMs ?? 30_000,
    stalledInterval: settings.stalledIntervalMs ?? 30_000,
    // A job that stalled two workers is given up, not handed on to freeze a third (see stalled-jobs.ts).
    maxStalledCount: STALLS_ALLOWED,
    ...RETENTION,
  };
}

/** The results queues of every world a worker serves, opened on first use. */
export class ResultQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly redis: Redis) {}

  async send(queue: string, jobId: string, data: object): Promise<void> {
    let q = this.queues.get(queue);
    if (!q) {
      q = new Queue(queue, { connection: this.redis, prefix: queuePrefix() });
      this.queues.set(queue, q);
    }
    await q.add('result', data, { jobId, ...RETENTION });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}

/**
 * The BullMQ half of a worker's episode loop, with what a job runs left to `handler`. It holds the
 * same contract as the in-process queue's pool (test/integration/queue/episode-queue-contract):
 * every job it takes yields exactly one result on its world's results queue, the handler's,
 * validated, or a `worker-error` result when the handler throws or returns something malformed.
 * A job the scheduler stopped (`cancel`) is not started, or its running handler's signal aborts.
 * A consumer killed mid-job leaves the job locked until its lock expires; BullMQ then hands it to
 * another consumer.
 */
/** How long a forced close waits for the episodes it aborted to stop their agents and clean up. */
const ABORTED_SETTLE_MS = 15_000;

export function consumeEpisodes(
  settings: ConsumerSettings & {
    results: ResultQueues;
    onChange?: (running: string[]) => void;
    onStart?: (data: DistributedJob, takenFrom: TakenFrom | null) => void;
    onEnd?: (result: EpisodeResult) => void;
    /** This consumer's name, noted as the job's taker so the next taker of the same job can name it. */
    workerId?: string;
  },
  handler: DistributedEpisodeHandler,
): EpisodeConsumer {
  const running = new Map<string, AbortController>();
  // A forced close aborts these and waits for them: an aborted episode still cleans its workspace,
  // and nothing of it may write after close returns.
  const settling = new Set<Promise<unknown>>();
  const changed = () => settings.onChange?.([...running.keys()]);
  const take = async (job: Job): Promise<EpisodeResult> => {
    const parsed = distributedJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`malformed episode job ${job.id}: ${parsed.error.issues[0]?.message ?? ''}`);
    const { job: episode } = parsed.data;
    const controller = new AbortController();
    running.set(episode.episodeId, controller);
    changed();
    settings.onStart?.(parsed.data, await noteTaker(settings.redis, episode.episodeId, settings.workerId ?? '?', job.attemptsStarted));
    try {
      const stopped = (await cancelRequested(settings.redis, [episode.episodeId])).length > 0;
      // Failures of the episode itself are results the scheduler must see (and, when fatal, stop on).
      const handled = Promise.resolve().then(() => (stopped ? stoppedBeforeStart(episode) : handler(parsed.data, controller.signal)));
      settling.add(handled);
      const result = await handled
        .then((r) => episodeResultSchema.parse(r))
        .catch((error: unknown) => workerError(episode, error))
        .finally(() => settling.delete(handled));
      await settings.results.send(parsed.data.resultQueue, result.episodeId, result);
      settings.onEnd?.(result);
      return result;
    } finally {
      running.delete(episode.episodeId);
      changed();
    }
  };
  const blocking = settings.redis.duplicate();
  const worker = new Worker(EPISODE_QUEUE, take, workerSettings(blocking, settings));
  worker.on('error', () => undefined); // connection errors while Redis restarts; BullMQ reconnects
  // One look for all running episodes at a time; a look still under way (Redis slow) is not doubled.
  let looking = false;
  const lookForCancels = setInterval(() => {
    if (looking || running.size === 0) return;
    looking = true;
    void cancelRequested(settings.redis, [...running.keys()])
      .then((ids) => {
        for (const id of ids) running.get(id)?.abort();
      })
      .finally(() => (looking = false));
  }, settings.cancelPollMs ?? 1000);
  lookForCancels.unref();
  return {
    running: () => [...running.keys()],
    async close(force = false) {
      clearInterval(lookForCancels);
      if (force) for (const c of running.values()) c.abort();
      await worker.close(force);
      if (force) await closeWithin(Promise.allSettled([...settling]), ABORTED_SETTLE_MS);
      // BullMQ leaves a connection it was given open; this one is ours to close.
      blocking.disconnect();
    },
  };
}
