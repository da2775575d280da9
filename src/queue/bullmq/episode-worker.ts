import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Agent } from '../../agents/agent.js';
import type { EpisodeResult } from '../../episode/episode-job.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { runEpisode } from '../../episode/run-episode.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LeaseStore } from '../lease-store.js';
import { ledgerOf } from '../../ledger/git-ledger.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { secretEnvNames } from '../../ledger/secret-env.js';
import { isGitUrl, openWorkerWorld } from '../../world/worker-world.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { consumeEpisodes, ResultQueues, workerSettings } from './job-consumer.js';
import { CALIBRATION_QUEUE, distributedCalibrationSchema, EPISODE_QUEUE, queuePrefix, type DistributedJob } from './distributed-job.js';
import { requestTip } from '../redis/tip-broker.js';
import { VERIFICATION_REF_PREFIX } from '../../world/history/verification-ref.js';
import type { VerificationResult } from '../verification-job.js';
import type { VerificationRunner } from '../verification-queue.js';
import { consumeVerifications, type DistributedVerification } from './verification-consumer.js';
import { tellWait } from '../redis/wait-channel.js';
import { startHeartbeat } from '../redis/worker-registry.js';
import { abandonedResult } from '../memory/memory-queue.js';
import { GenesisError, isGenesisError } from '../../errors/genesis-error.js';
import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import { candidateVerdictSchema } from '../../gate/verdict-schema.js';
import { runCalibrationGate } from '../../operations/calibrate/calibration-gate.js';
import { LocalWorld } from '../../world/local-world.js';

export interface EpisodeWorkerOptions {
  redis: Redis;
  concurrency: number;
  /** Where mirrors of worlds behind git URLs are kept. */
  cacheDir: string;
  /** How long a job stays locked without renewal: a killed worker's job restarts after about this. @default 30 s */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  onEvent?: (event: WorkerEvent) => void;
  /** Builds the agent a job's world asks for at the job's base: the composition root's factory (`genesis worker`). */
  createAgent: (manifest: WorldManifest, world: WorldRepo, head: string) => Promise<Agent>;
  /** Builds the gate sandbox a world's manifest asks for, for an episode, a verification or a calibration gate. */
  createSandbox: (manifest: WorldManifest) => Promise<Sandbox>;
  /** The path lease store of the world a job names (its key in Redis): the composition root's `RedisPathLeases`. */
  leases: (worldKey: string) => LeaseStore;
  /** Gates one speculative commit and records it in the world: the composition root passes src/integrate's runVerification. */
  runVerification: VerificationRunner;
}

/**
 * What a worker reports while it works (`genesis worker --json` prints one line each): a job taken
 * (after `takeover` when another worker had it before) and its result sent, each phase of an episode as it starts, a request for a place in the
 * integration queue and its answer (`gate-on-tip`: the scheduler gave the change a place; its gate on
 * that tip starts), a verification's start and end, a calibration gate's start and end (`episodeId`
 * is then the gate's name and `task` the world's name), and each wait (begun and ended) the
 * worker's output tells once it lasts.
 */
export interface WorkerEvent {
  type:
    | 'start'
    | 'takeover'
    | 'end'
    | 'phase'
    | 'tip-asked'
    | 'tip-answered'
    | 'gate-on-tip'
    | 'verify-start'
    | 'verify-end'
    | 'calibrate-start'
    | 'calibrate-end'
    | 'wait';
  episodeId: string;
  task: string;
  verdict?: string;
  /** With `phase`: the phase starting (workspace, deps, agent, collect, gate, gate-on-base); with `wait`, `verification` or `calibration` for theirs. */
  phase?: string;
  /** With `takeover`: the worker that had the job before (it stalled, died or handed it back), null when unknown. */
  from?: string | null;
  /** With `wait`: what the episode or verification waits on now (a dependency set, a tip's baseline), null when the wait ended. */
  what?: string | null;
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
  const heartbeat = await startHeartbeat(options.redis, {
    id,
    host: hostname(),
    pid: process.pid,
    concurrency: options.concurrency,
    queue: EPISODE_QUEUE,
    prefix: queuePrefix(),
  });
  const results = new ResultQueues(options.redis);
  const episodes = consumeEpisodes(
    {
      ...options,
      results,
      onChange: (running) => heartbeat.setEpisodes(running),
      workerId: id,
      onStart: ({ job }, takenFrom) => {
        if (takenFrom) options.onEvent?.({ type: 'takeover', episodeId: job.episodeId, task: job.task, from: takenFrom.worker });
        options.onEvent?.({ type: 'start', episodeId: job.episodeId, task: job.task });
      },
      onEnd: (result) => options.onEvent?.({ type: 'end', episodeId: result.episodeId, task: result.task, verdict: result.verdict }),
    },
    (data, signal) => runLeased(data, options, id, signal),
  );
  // Verifications of speculative commits run where episodes run, with the same concurrency.
  const verifier = consumeVerifications(
    {
      ...options,
      results,
      onEnd: ({ job: v }, result) =>
        options.onEvent?.({ type: 'verify-end', episodeId: v.episodeId, task: v.task, verdict: result.ok ? 'passed' : (result.reason ?? 'failed') }),
    },
    (data) => verify(data, options, id),
  );
  // So do the gates of a calibration (genesis calibrate --redis); each verdict goes back as the job's return value.
  const calibrateBlocking = options.redis.duplicate();
  const calibrator = new Worker(CALIBRATION_QUEUE, (job: Job) => calibrate(job, options), workerSettings(calibrateBlocking, options));
  calibrator.on('error', () => undefined);
  return {
    id,
    async close(force = false) {
      await Promise.all([episodes.close(force), verifier.close(force), calibrator.close(force)]);
      await heartbeat.stop();
      await results.close();
      // BullMQ leaves a connection it was given open; these are ours to close.
      calibrateBlocking.disconnect();
    },
  };
}

async function runLeased(data: DistributedJob, options: EpisodeWorkerOptions, workerId: string, signal: AbortSignal): Promise<EpisodeResult> {
  const { job } = data;
  const world = await openWorkerWorld(data.remote, options.cacheDir);
  await world.sync();
  const manifest = await world.repo.manifestAt(job.base);
  const task = manifest.tasks.find((t) => t.id === job.task);
  const leases = options.leases(data.worldKey);
  const ledger = ledgerOf(world.repo, { secretEnv: secretEnvNames(manifest.agent) });
  const record = await ledger.read(job.episodeId);
  // A job put back after Redis lost it may name an episode the scheduler already closed: nothing to run, no lease to take.
  if (record?.status === 'final') {
    return abandonedResult(job, 'the episode was already closed when this job ran', 'episode-closed');
  }
  // A job delivered again after its episode ran and passed (its worker stalled or died before the result got out, or
  // Redis lost the job): its change may be waiting to land, so it is sent again as recorded, never made a second time.
  if (record && ranAndPassed(record)) {
    await world.publish(job.episodeId);
    return {
      episodeId: job.episodeId,
      task: job.task,
      attempt: job.attempt,
      base: record.base,
      candidate: record.candidate,
      verdict: 'passed',
      reason: null,
      message: record.message,
      signature: null,
      ...(record.gatedOn ? { gatedOn: record.gatedOn } : {}),
      ...(record.source ? { source: record.source } : {}),
    };
  }
  // A restarted job re-takes its lease: if another episode took overlapping paths meanwhile, this one yields.
  // A racer works under its race's lease (the holder the job names), which its fellow racers share.
  const holder = job.lease ?? job.episodeId;
  if (!task || !(await leases.tryAcquire(holder, task.paths))) {
    return {
      episodeId: job.episodeId,
      task: job.task,
      attempt: job.attempt,
      base: job.base,
      candidate: null,
      verdict: 'abandoned',
      reason: 'lease-lost',
      message: 'the path lease of this episode was lost before it ran',
      signature: null,
    };
  }
  const renew = setInterval(() => void leases.renew(holder), 5_000);
  try {
    const agent = await options.createAgent(manifest, world.repo, job.base);
    const sandbox = await options.createSandbox(manifest);
    const onWait = waitTeller(options, workerId, data.worldKey, { id: job.episodeId, episodeId: job.episodeId, task: job.task });
    // On the world's own storage the scheduler can build on this worker's candidate: ask it for a place.
    const reserveTip =
      data.tips && !isGitUrl(data.remote)
        ? async (change: Parameters<typeof requestTip>[2]) => {
            options.onEvent?.({ type: 'tip-asked', episodeId: job.episodeId, task: job.task });
            onWait(null, "the scheduler's answer: a place in its integration queue to gate on, or none (then it gates on its base)");
            const place = await requestTip(options.redis, data.worldKey, change).finally(() => onWait(null, null));
            options.onEvent?.({ type: 'tip-answered', episodeId: job.episodeId, task: job.task, verdict: place ? 'placed' : 'none' });
            if (place) options.onEvent?.({ type: 'gate-on-tip', episodeId: job.episodeId, task: job.task });
            return place;
          }
        : undefined;
    const onPhase = (_: unknown, phase: string) => options.onEvent?.({ type: 'phase', episodeId: job.episodeId, task: job.task, phase });
    const result = await runEpisode(job, { world: world.repo, ledger, sandbox, agent, worker: workerId, signal, reserveTip, onPhase, onWait });
    // Closed while this duplicate ran: the scheduler will not release the lease it re-took.
    if (result.reason === 'episode-closed' && holder === job.episodeId) await leases.release(job.episodeId);
    else await world.publish(job.episodeId);
    return result;
  } finally {
    // The lease stays the scheduler's until the change is integrated (see LeaseStore); it renews it from here on.
    clearInterval(renew);
  }
}

/** One verification on this worker: the gate of a speculative commit, recorded in the world (its ref published) before its result is sent. */
async function verify(data: DistributedVerification, options: EpisodeWorkerOptions, workerId: string): Promise<VerificationResult> {
  const { job: v } = data;
  const world = await openWorkerWorld(data.remote, options.cacheDir);
  await world.sync();
  const manifest = await world.repo.manifestAt(v.onto);
  const sandbox = await options.createSandbox(manifest);
  options.onEvent?.({ type: 'verify-start', episodeId: v.episodeId, task: v.task });
  const onWait = waitTeller(options, workerId, data.worldKey, { id: v.verificationId, episodeId: v.episodeId, task: v.task, phase: 'verification' });
  const result = await options.runVerification(v, { world: world.repo, sandbox, worker: workerId, onWait });
  await world.publishRef?.(`${VERIFICATION_REF_PREFIX}${v.verificationId}`);
  return result;
}

/**
 * One gate of a calibration on this worker, in the calibration's scratch world, which it opens
 * where the calibrating process made it: a directory under the world's, so this works only where
 * the world is on storage both reach at the same path.
 */
async function calibrate(job: Job, options: EpisodeWorkerOptions): Promise<CandidateVerdict> {
  const parsed = distributedCalibrationSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`malformed calibration job ${job.id}: ${parsed.error.issues[0]?.message ?? ''}`);
  const { job: gate, scratch: path } = parsed.data;
  const scratch = await LocalWorld.open(path).catch((cause: unknown) => {
    if (!isGenesisError(cause) || (cause.code !== 'world-not-found' && cause.code !== 'world-not-a-repo')) throw cause;
    throw new GenesisError(
      'calibrate-scratch-unreachable',
      `the calibration's scratch world ${path} is not on this worker's storage: calibration on workers needs the world on storage the workers share, at the same path`,
      {
        hint: 'put the world where every worker reaches it at the same path (a world behind a git URL cannot be calibrated on workers), or calibrate without --redis',
        cause,
      },
    );
  });
  const manifest = await scratch.manifestAt(parsed.data.manifestAt);
  const sandbox = await options.createSandbox(manifest);
  options.onEvent?.({ type: 'calibrate-start', episodeId: gate.name, task: manifest.name });
  const onWait = (what: string | null) => options.onEvent?.({ type: 'wait', episodeId: gate.name, task: manifest.name, phase: 'calibration', what });
  const verdict = await runCalibrationGate({ scratch, manifest, sandbox, onWait }, gate);
  options.onEvent?.({ type: 'calibrate-end', episodeId: gate.name, task: manifest.name, verdict: verdict.ok ? 'passed' : verdict.reason });
  // Checked here too, as every payload crossing the queue is: a verdict the caller would refuse fails the job with the reason.
  return candidateVerdictSchema.parse(verdict);
}

/**
 * What a job's wait goes to: this worker's output, and the world's scheduler (under `id`, the
 * job's own: an episode's, or a verification's, as the scheduler knows it).
 */
function waitTeller(
  options: EpisodeWorkerOptions,
  workerId: string,
  worldKey: string,
  job: { id: string; episodeId: string; task: string; phase?: string },
): (_: unknown, what: string | null) => void {
  return (_, what) => {
    options.onEvent?.({ type: 'wait', episodeId: job.episodeId, task: job.task, ...(job.phase ? { phase: job.phase } : {}), what });
    void tellWait(options.redis, worldKey, { id: job.id, task: job.task, what, worker: workerId });
  };
}

/** The record of an episode whose agent ran and whose own gate passed its candidate, still open (waiting to land). */
function ranAndPassed(record: EpisodeRecord): record is EpisodeRecord & { candidate: string } {
  return record.status === 'running' && record.candidate !== null && record.gate?.ok === true && record.reason === null;
}
