import { hostname } from 'node:os';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Agent } from '../agents/agent.js';
import type { EpisodeResult } from '../episode/episode-job.js';
import { runEpisode } from '../episode/run-episode.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { Ledger } from '../world/ledger.js';
import type { WorldManifest } from '../world/manifest-schema.js';
import { secretEnvNames } from '../world/secret-env.js';
import { openWorkerWorld } from '../world/worker-world.js';
import type { WorldRepo } from '../world/world-repo.js';
import { distributedJobSchema, distributedVerificationSchema, EPISODE_QUEUE, queuePrefix, RETENTION, VERIFICATION_QUEUE, type DistributedJob } from './distributed-job.js';
import { runVerification } from '../integrate/run-verification.js';
import { VERIFICATION_REF_PREFIX } from '../integrate/verification-ledger.js';
import { RedisPathLeases } from './redis-path-leases.js';
import { workerError } from './memory-queue.js';
import { startHeartbeat } from './worker-registry.js';

export interface EpisodeWorkerOptions {
  redis: Redis;
  concurrency: number;
  /** Where mirrors of worlds behind git URLs are kept. */
  cacheDir: string;
  /** How long a job stays locked without renewal: a killed worker's job restarts after about this. @default 30 s */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  onEvent?: (event: { type: 'start' | 'end' | 'verify-start' | 'verify-end'; episodeId: string; task: string; verdict?: string }) => void;
  /** Builds the agent a job's world asks for at the job's base: the composition root's factory (`genesis worker`). */
  createAgent: (manifest: WorldManifest, world: WorldRepo, head: string) => Promise<Agent>;
  /** Builds the gate sandbox a world's manifest asks for, for an episode or a verification. */
  createSandbox: (manifest: WorldManifest) => Promise<Sandbox>;
}

export interface EpisodeWorker {
  readonly id: string;
  /** Finishes the running episodes, then stops; with `force`, aborts them and hands their jobs back. */
  close(force?: boolean): Promise<void>;
}

/**
 * `genesis worker`: takes episode jobs of any world from the shared queue, runs each end to end
 * (workspace, agent, gate) and sends the result to the world's results queue. It needs only Redis
 * and the world's location. It renews the task's path lease while it runs (the scheduler took it and
 * releases it once the change is integrated), so a dead worker's lease expires on its own.
 */
export async function startEpisodeWorker(options: EpisodeWorkerOptions): Promise<EpisodeWorker> {
  const id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const running = new Map<string, AbortController>();
  const heartbeat = await startHeartbeat(options.redis, { id, host: hostname(), pid: process.pid, concurrency: options.concurrency, queue: EPISODE_QUEUE });
  const resultQueues = new Map<string, Queue>();
  const resultQueue = (name: string) => {
    let q = resultQueues.get(name);
    if (!q) {
      q = new Queue(name, { connection: options.redis, prefix: queuePrefix() });
      resultQueues.set(name, q);
    }
    return q;
  };
  const process_ = async (job: Job): Promise<EpisodeResult> => {
    const parsed = distributedJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`malformed episode job ${job.id}: ${parsed.error.issues[0]?.message ?? ''}`);
    const controller = new AbortController();
    running.set(parsed.data.job.episodeId, controller);
    heartbeat.setEpisodes([...running.keys()]);
    options.onEvent?.({ type: 'start', episodeId: parsed.data.job.episodeId, task: parsed.data.job.task });
    try {
      // Failures of the episode itself are results the scheduler must see (and, when fatal, stop on).
      const result = await runLeased(parsed.data, options, id, controller.signal).catch((error: unknown) => workerError(parsed.data.job, error));
      await resultQueue(parsed.data.resultQueue).add('result', result, { jobId: result.episodeId, ...RETENTION });
      options.onEvent?.({ type: 'end', episodeId: result.episodeId, task: result.task, verdict: result.verdict });
      return result;
    } finally {
      running.delete(parsed.data.job.episodeId);
      heartbeat.setEpisodes([...running.keys()]);
    }
  };
  // Each BullMQ worker blocks on a connection of its own.
  const settings = (connection: typeof options.redis) => ({
    connection,
    prefix: queuePrefix(),
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: 2,
    ...RETENTION,
  });
  const blocking = options.redis.duplicate();
  const worker = new Worker(EPISODE_QUEUE, process_, settings(blocking));
  worker.on('error', () => undefined); // connection errors while Redis restarts; BullMQ reconnects
  // Verifications of speculative commits run where episodes run, with the same concurrency.
  const verifyBlocking = options.redis.duplicate();
  const verifier = new Worker(VERIFICATION_QUEUE, (job: Job) => verify(job, options, id, resultQueue), settings(verifyBlocking));
  verifier.on('error', () => undefined);
  return {
    id,
    async close(force = false) {
      if (force) for (const c of running.values()) c.abort();
      await Promise.all([worker.close(force), verifier.close(force)]);
      await heartbeat.stop();
      await Promise.all([...resultQueues.values()].map((q) => q.close()));
      // BullMQ leaves a connection it was given open; this one is ours to close.
      blocking.disconnect();
      verifyBlocking.disconnect();
    },
  };
}

async function runLeased(data: DistributedJob, options: EpisodeWorkerOptions, workerId: string, signal: AbortSignal): Promise<EpisodeResult> {
  const { job } = data;
  const world = await openWorkerWorld(data.remote, options.cacheDir);
  await world.sync();
  const manifest = await world.repo.manifestAt(job.base);
  const task = manifest.tasks.find((t) => t.id === job.task);
  const leases = new RedisPathLeases(options.redis, data.worldKey);
  const ledger = new Ledger(world.repo.path, { secretEnv: secretEnvNames(manifest.agent) });
  // A job put back after Redis lost it may name an episode the scheduler already closed: nothing to run, no lease to take.
  if ((await ledger.read(job.episodeId))?.status === 'final') {
    return { episodeId: job.episodeId, task: job.task, attempt: job.attempt, base: job.base, candidate: null, verdict: 'abandoned', reason: 'episode-closed', message: 'the episode was already closed when this job ran', signature: null };
  }
  // A restarted job re-takes its lease: if another episode took overlapping paths meanwhile, this one yields.
  if (!task || !(await leases.tryAcquire(job.episodeId, task.paths))) {
    return { episodeId: job.episodeId, task: job.task, attempt: job.attempt, base: job.base, candidate: null, verdict: 'abandoned', reason: 'lease-lost', message: 'the path lease of this episode was lost before it ran', signature: null };
  }
  const renew = setInterval(() => void leases.renew(job.episodeId), 5_000);
  try {
    const agent = await options.createAgent(manifest, world.repo, job.base);
    const sandbox = await options.createSandbox(manifest);
    const result = await runEpisode(job, { world: world.repo, ledger, sandbox, agent, worker: workerId, signal });
    // Closed while this duplicate ran: the scheduler will not release the lease it re-took.
    if (result.reason === 'episode-closed') await leases.release(job.episodeId);
    else await world.publish(job.episodeId);
    return result;
  } finally {
    // The lease stays the scheduler's until the change is integrated (see LeaseStore); it renews it from here on.
    clearInterval(renew);
  }
}

/** One verification on this worker: the gate of a speculative commit, recorded in the world, then its result sent. */
async function verify(job: Job, options: EpisodeWorkerOptions, workerId: string, resultQueue: (name: string) => Queue): Promise<void> {
  const parsed = distributedVerificationSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`malformed verification job ${job.id}: ${parsed.error.issues[0]?.message ?? ''}`);
  const { job: v } = parsed.data;
  const world = await openWorkerWorld(parsed.data.remote, options.cacheDir);
  await world.sync();
  const manifest = await world.repo.manifestAt(v.onto);
  const sandbox = await options.createSandbox(manifest);
  options.onEvent?.({ type: 'verify-start', episodeId: v.episodeId, task: v.task });
  const result = await runVerification(v, { world: world.repo, sandbox, worker: workerId });
  await world.publishRef?.(`${VERIFICATION_REF_PREFIX}${v.verificationId}`);
  await resultQueue(parsed.data.resultQueue).add('result', result, { jobId: String(job.id), ...RETENTION });
  options.onEvent?.({ type: 'verify-end', episodeId: v.episodeId, task: v.task, verdict: result.ok ? 'passed' : (result.reason ?? 'failed') });
}
