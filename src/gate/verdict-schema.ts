import { z } from 'zod';
import { isRejectionReason, type RejectionReason } from '../errors/rejection-reasons.js';
import type { GateRecord } from '../ledger/episode-record.js';
import type { CandidateVerdict } from './verify-candidate.js';

const gateStepRecordSchema = z
  .object({
    name: z.string(),
    command: z.string(),
    exitCode: z.number().int(),
    timedOut: z.boolean(),
    oomKilled: z.boolean(),
    durationMs: z.number(),
    tests: z.object({ format: z.string(), passed: z.number(), failed: z.number(), skipped: z.number() }).strict().nullable(),
    hidden: z.boolean().optional(),
    why: z.string().optional(),
  })
  .strict();

const gateRecordSchema = z
  .object({
    ok: z.boolean(),
    sandbox: z.string(),
    summary: z.string(),
    steps: z.array(gateStepRecordSchema),
    durationMs: z.number(),
    flaky: z.array(z.string()).optional(),
    score: z.number().nullable().optional(),
    image: z.object({ name: z.string(), id: z.string() }).strict().nullable().optional(),
  })
  .strict();

/**
 * A gate's whole verdict as it comes back from a process that ran it (a worker): checked field by
 * field, since a calibration reads its reason, message, log, flaky steps and step names. A reason
 * this version does not know fails the check rather than being read as another one.
 */
export const candidateVerdictSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), gate: gateRecordSchema, log: z.string(), changedFiles: z.array(z.string()) }).strict(),
  z
    .object({
      ok: z.literal(false),
      reason: z.custom<RejectionReason>(isRejectionReason, 'a rejection reason this version knows'),
      message: z.string(),
      signature: z.string(),
      gate: gateRecordSchema.nullable(),
      log: z.string(),
      changedFiles: z.array(z.string()),
    })
    .strict(),
]);

// The schema and the types it stands for must not drift apart: each side must be assignable to the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const recordsAgree: Same<z.output<typeof gateRecordSchema>, GateRecord> = true;
const verdictsAgree: Same<z.output<typeof candidateVerdictSchema>, CandidateVerdict> = true;
void [recordsAgree, verdictsAgree];
