import { z } from 'zod';

/**
 * What the `openai` agent's program and Genesis agree on. The program runs inside the agent
 * sandbox; it learns everything from its environment and leaves its outcome in two files of
 * `GENESIS_RESULT_DIR` (in the agent's private HOME), which Genesis reads after it exited. Both
 * are written by a process the agent's own commands share a uid with, so Genesis reads them as
 * untrusted: bounded, regular files only, and checked against this schema.
 */
export const PROGRAM_ENV = {
  /** The API root of the model, e.g. `https://api.openai.com/v1` (the model channel's URL, once it is on the road). */
  baseUrl: 'OPENAI_BASE_URL',
  /** Read when OPENAI_BASE_URL is not set. */
  modelUrl: 'GENESIS_MODEL_URL',
  apiKey: 'OPENAI_API_KEY',
  model: 'GENESIS_MODEL',
  maxTurns: 'GENESIS_MAX_TURNS',
  maxTokens: 'GENESIS_MAX_TOKENS',
  requestTimeoutMs: 'GENESIS_REQUEST_TIMEOUT_MS',
  commandTimeoutMs: 'GENESIS_COMMAND_TIMEOUT_MS',
  commandOutputBytes: 'GENESIS_COMMAND_OUTPUT_BYTES',
  maxRetries: 'GENESIS_MAX_RETRIES',
  maxRetryWaitMs: 'GENESIS_MAX_RETRY_WAIT_MS',
  resultDir: 'GENESIS_RESULT_DIR',
} as const;

export const RESULT_FILE = 'result.json';
export const TRANSCRIPT_FILE = 'transcript.json';

/** Errors the program may report that end the run for a person to fix (the circuit opens); any other code is not believed. */
export const FATAL_CODES = ['agent-auth-failed', 'agent-model-not-found', 'agent-quota-exhausted', 'agent-endpoint-unreachable'] as const;
/** Why an episode ended early, as the program may report it. */
const FAILURE_REASONS = ['agent-context-length', 'agent-rate-limited', 'agent-model-error', 'agent-turn-budget', 'agent-token-budget'] as const;

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable();

export const programResultSchema = z.object({
  version: z.literal(1),
  outcome: z.enum(['finished', 'failed', 'stopped']),
  usage: z.object({ inputTokens: count, outputTokens: count, cachedTokens: count }),
  failure: z.object({ reason: z.enum(FAILURE_REASONS), message: z.string().max(4000) }).optional(),
  fatal: z.object({ code: z.enum(FATAL_CODES), message: z.string().max(4000) }).optional(),
});

export type ProgramResult = z.infer<typeof programResultSchema>;
