import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { GenesisError, isGenesisError } from '../../errors/genesis-error.js';
import { candidateVerdictSchema } from '../../gate/verdict-schema.js';
import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import type { CalibrationGateJob, CalibrationGates } from '../../operations/calibrate/calibration-gate.js';
import { listWorkers, type WorkerInfo } from '../redis/worker-registry.js';
import { closeWithin } from './close-within.js';
import { lostJobEnd } from './stalled-jobs.js';
import { CALIBRATION_QUEUE, distributedCalibrationSchema, queuePrefix, RETENTION } from './distributed-job.js';

/** The workers of this fleet (this queue prefix) alive now: the ones that take calibration gates sent from here. */
export async function listFleetWorkers(redis: Redis): Promise<WorkerInfo[]> {
  // An entry without a prefix is from a worker older than the field, which used the default one.
  return (await listWorkers(redis)).filter((w) => (w.prefix ?? 'genesis') === queuePrefix());
}

/**
 * The calibrating process's side of `genesis calibrate --redis`: each gate goes to the shared
 * `calibrations` queue, which every `genesis worker` takes from as it takes episodes, and its
 * verdict comes back as the job's return value, checked before a calibration counts it. A worker
 * killed mid-gate has its job taken again after the stall interval; one that stalled two workers
 * is given up as every job kind is (`calibrate-poison-pill`, see stalled-jobs.ts); a job that
 * failed there otherwise is an error that names the gate, and so is a wait with no worker left
 * alive to finish it: a calibration never waits for ever, nor counts a gate it did not see.
 */
export class BullmqCalibrationGates {
  private readonly jobs: Queue;
  private readonly events: QueueEvents;
  private readonly blocking: Redis;
  private readonly livenessMs: number;
  /** Jobs sent and not finished, which close takes back from the queue when they wait still. */
  private readonly pending = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly where: { worldKey: string },
    timing: { livenessMs?: number } = {},
  ) {
    this.blocking = redis.duplicate();
    this.jobs = new Queue(CALIBRATION_QUEUE, { connection: redis, prefix: queuePrefix() });
    this.events = new QueueEvents(CALIBRATION_QUEUE, { connection: this.blocking, prefix: queuePrefix() });
    this.events.on('error', () => undefined);
    this.livenessMs = timing.livenessMs ?? 5_000;
  }

  /** The port calibrateWorld takes: every gate of the calibration is sent to the workers. */
  readonly gates: CalibrationGates =
    ({ scratch, worldHead }) =>
    (job) =>
      this.gate(scratch.path, worldHead, job);

  /** Takes back the gates still waiting for a worker (a calibration that stopped early); a running one finishes there. */
  async close(): Promise<void> {
    for (const jobId of this.pending) await this.takeBack(jobId);
    // Bounded: while Redis restarts, BullMQ's close would wait for ever (see close-within.ts).
    await closeWithin(Promise.all([this.events.close(), this.jobs.close()]));
    this.blocking.disconnect();
  }

  private async gate(scratch: string, manifestAt: string, job: CalibrationGateJob): Promise<CandidateVerdict> {
    const data = distributedCalibrationSchema.parse({ job, scratch, manifestAt, worldKey: this.where.worldKey });
    // The scratch world's path is new for every calibration, so no earlier calibration's kept job answers this one.
    const jobId = `${createHash('sha1').update(scratch).digest('hex').slice(0, 16)}-${job.name}`;
    const stop = new AbortController();
    let finished = false;
    this.pending.add(jobId);
    try {
      const added = await this.jobs.add('calibration', data, { jobId, attempts: 1, ...RETENTION });
      const returned: unknown = await Promise.race([added.waitUntilFinished(this.events), this.watch(jobId, job.name, stop.signal)]);
      finished = true;
      const parsed = candidateVerdictSchema.safeParse(returned);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new GenesisError(
          'calibrate-verdict-invalid',
          `the verdict a worker sent for the calibration gate ${job.name} is not valid: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'no verdict'}`,
          { hint: 'run the same version of Genesis on the workers as the one that calibrates' },
        );
      }
      return parsed.data;
    } catch (error) {
      if (isGenesisError(error)) throw error;
      const end = lostJobEnd((error as Error).message ?? '', `the calibration gate ${job.name}`, 'it is offered to no third worker');
      // The same rule as every job kind's: a gate that froze two workers is offered to no third, nor retried.
      if (end.reason === 'poison-pill')
        throw new GenesisError('calibrate-poison-pill', end.message, {
          hint: `run the gate's commands by hand on the replayed commit to see what kills or freezes the worker, then calibrate again`,
          cause: error,
        });
      throw new GenesisError(
        'calibrate-gate-failed',
        `the calibration gate ${job.name} did not finish on the workers: ${(error as Error).message || 'its job is gone from Redis'}`,
        {
          hint: "see the worker's output (genesis worker --json); calibrating on workers needs the world on storage they share, at the same path",
          cause: error,
        },
      );
    } finally {
      stop.abort();
      // A gate given up on while its job still waits would run later, in a scratch world that is gone by then.
      this.pending.delete(jobId);
      if (!finished) await this.takeBack(jobId);
    }
  }

  private async takeBack(jobId: string): Promise<void> {
    const job = await this.jobs.getJob(jobId).catch(() => undefined);
    if (job && (await job.isWaiting().catch(() => false))) await job.remove().catch(() => undefined);
  }

  /**
   * Looks at the job and the fleet every `livenessMs`. A job found finished settles the gate: the
   * event that says so is missed when it comes before the events' stream is first read (a gate
   * that fails at once). And once no worker of the fleet has been alive for two looks running it
   * rejects: a job whose worker died is taken again by another (BullMQ's stall check), but only a
   * live worker runs that check, and nobody takes a job that waits, so losing the last worker
   * would hang the calibration.
   */
  private async watch(jobId: string, name: string, stop: AbortSignal): Promise<unknown> {
    let silent = 0;
    for (;;) {
      await sleep(this.livenessMs, undefined, { signal: stop });
      const job = await this.jobs.getJob(jobId);
      if (!job) throw new Error('its job is gone from Redis');
      const state = await job.getState();
      if (state === 'completed') return job.returnvalue;
      if (state === 'failed') throw new Error(job.failedReason);
      silent = (await listFleetWorkers(this.redis)).length > 0 ? 0 : silent + 1;
      if (silent >= 2) {
        throw new GenesisError('calibrate-no-workers', `no genesis worker is alive to finish the calibration gate ${name}`, {
          hint: `start one (genesis worker --redis <url>) and calibrate again`,
        });
      }
    }
  }
}
