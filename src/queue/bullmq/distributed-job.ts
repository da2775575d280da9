import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { episodeJobSchema } from '../../episode/episode-job.js';
import { verificationJobSchema } from '../verification-job.js';
import { calibrationGateJobSchema } from '../../operations/calibrate/calibration-gate.js';

/**
 * BullMQ key prefix: every queue key Genesis writes in Redis starts with `genesis:`.
 * GENESIS_QUEUE_PREFIX gives a separate namespace (tests, or two fleets sharing one Redis).
 */
export function queuePrefix(): string {
  return process.env.GENESIS_QUEUE_PREFIX ?? 'genesis';
}
export const EPISODE_QUEUE = 'episodes';
/** Speculative commits to verify, taken by the same workers as episodes. */
export const VERIFICATION_QUEUE = 'verifications';
/** The gates of `genesis calibrate --redis`, taken by the same workers as episodes. */
export const CALIBRATION_QUEUE = 'calibrations';

/**
 * An episode job as it travels through Redis: what to run, where the world is for the worker
 * (a path on shared storage or a git URL), and which queue takes the result back to the world's
 * scheduler. Validated when enqueued and again when a worker takes it.
 */
export const distributedJobSchema = z
  .object({
    job: episodeJobSchema,
    remote: z.string().min(1),
    worldKey: z.string().regex(/^[A-Za-z0-9._-]+$/),
    resultQueue: z.string().min(1),
    /** The scheduler answers requests for a place in its integration queue (see redis-tip-broker). */
    tips: z.boolean().optional(),
  })
  .strict();

export type DistributedJob = z.output<typeof distributedJobSchema>;

/** Names a world in Redis: its name plus a hash of where it lives, so two worlds never share keys. */
export function worldKeyOf(name: string, location: string): string {
  return `${name}-${createHash('sha1').update(location).digest('hex').slice(0, 10)}`;
}

export function resultQueueOf(worldKey: string): string {
  return `results-${worldKey}`;
}

/** Completed and failed jobs are trimmed so Redis does not grow without bound over a long run. */
export const RETENTION = {
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
} as const;

/** A verification job as it travels through Redis, like an episode job: what, where, and where the result goes. */
export const distributedVerificationSchema = z
  .object({
    job: verificationJobSchema,
    remote: z.string().min(1),
    worldKey: z.string().regex(/^[A-Za-z0-9._-]+$/),
    resultQueue: z.string().min(1),
  })
  .strict();

export function verificationResultQueueOf(worldKey: string): string {
  return `verification-results-${worldKey}`;
}

/**
 * A calibration gate as it travels through Redis: the gate, the scratch world it runs in (an
 * absolute path: a worker must reach it on shared storage), the world commit whose manifest judges
 * it, and the world's key. Its verdict comes back as the job's return value.
 */
export const distributedCalibrationSchema = z
  .object({
    job: calibrationGateJobSchema,
    scratch: z.string().refine(isAbsolute, 'an absolute path'),
    manifestAt: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id'),
    worldKey: z.string().regex(/^[A-Za-z0-9._-]+$/),
  })
  .strict();
