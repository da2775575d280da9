import { z } from 'zod';
import { isRejectionReason, type RejectionReason } from '../errors/rejection-reasons.js';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id');

/** A speculative commit to verify: validated when enqueued and again when a worker takes it. */
export const verificationJobSchema = z
  .object({
    verificationId: z.string().regex(/^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{6}-v[0-9]+$/),
    episodeId: z.string().min(1),
    generation: z.number().int().min(1),
    world: z.string().min(1),
    task: z.string().min(1),
    /** The speculative commit: `onto` plus the change. */
    commit: sha,
    onto: sha,
  })
  .strict();

export type VerificationJob = z.output<typeof verificationJobSchema>;

export const verificationResultSchema = z
  .object({
    verificationId: z.string(),
    episodeId: z.string(),
    generation: z.number().int(),
    commit: sha,
    ok: z.boolean(),
    /** Registered in src/vocabulary; one this version does not know is read as `verification-failed`. */
    reason: z.custom<RejectionReason>(isRejectionReason).nullable().catch('verification-failed'),
    message: z.string().nullable(),
    signature: z.string().nullable(),
  })
  .strict();

export type VerificationResult = z.output<typeof verificationResultSchema>;
