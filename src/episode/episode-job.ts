import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isEpisodeReason, type EpisodeReason } from '../errors/rejection-reasons.js';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id');

/** What a worker needs to run one episode. Validated when enqueued and again when taken. */
export const episodeJobSchema = z
  .object({
    episodeId: z.string().regex(/^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{6}$/),
    world: z.string().min(1),
    task: z.string().min(1),
    attempt: z.number().int().min(1),
    /** The attempt counted since the task's latest retry or reopening, as `retry.maxAttempts` is held against: what the prompt shows. */
    round: z.number().int().min(1).optional(),
    base: sha,
    /** Ids of this task's earlier finished attempts, oldest first: the worker reads just these for reflections. */
    earlier: z.array(z.string()).max(50).optional(),
    /** The holder of the path lease the episode works under, when not itself: a racer shares its race's (the first racer's). */
    lease: z.string().optional(),
    /** What is left of the world's budgets when the episode starts: the model gateway refuses its calls past it. */
    spendable: z
      .object({
        tokens: z.number().min(0).optional(),
        costUsd: z.number().min(0).optional(),
        /** What is left of the task's own budget (agent.maxTaskTokens, maxTaskCostUsd) over its attempts. */
        taskTokens: z.number().min(0).optional(),
        taskCostUsd: z.number().min(0).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type EpisodeJob = z.output<typeof episodeJobSchema>;

/**
 * What a worker hands to the integrator. `passed` means the gate accepted the candidate at its
 * base; only the integrator decides whether it lands. `queued`: the gate judged a place in the
 * integration queue that was rebuilt under it (a change ahead failed there), so the change waits
 * in the queue, whose verification on its new place is its gate.
 */
export const episodeResultSchema = z
  .object({
    episodeId: z.string(),
    task: z.string(),
    attempt: z.number().int(),
    base: sha,
    candidate: sha.nullable(),
    verdict: z.enum(['passed', 'queued', 'rejected', 'failed', 'abandoned']),
    /** Registered in src/vocabulary; one this version does not know (a worker of another version) is read as `worker-error`. */
    reason: z.custom<EpisodeReason>(isEpisodeReason).nullable().catch('worker-error'),
    message: z.string().nullable(),
    signature: z.string().nullable(),
    /** The failure cannot be cured by another episode (a missing agent binary, bad credentials). */
    fatal: z.boolean().optional(),
    /** A usage or rate limit: no episode of the world starts before this time (ms since the epoch). */
    holdUntil: z.number().int().positive().optional(),
    /** The speculative tip the gate judged the change on, when not its base: the candidate's parent. */
    gatedOn: sha.optional(),
    /** With `gatedOn`: the change as the agent made it, on its base (what is merged if it must move to another tip). */
    source: sha.optional(),
  })
  .strict();

export type EpisodeResult = z.output<typeof episodeResultSchema>;

/** Ids sort by start time (the ledger lists oldest first) and are valid in git ref names. */
export function newEpisodeId(now = new Date()): string {
  const iso = now.toISOString(); // 2026-11-29T14:40:12.123Z
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}`;
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
