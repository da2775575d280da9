import { GenesisError } from '../errors/genesis-error.js';
import type { AgentRunResult } from './agent.js';

/**
 * A cause a harness must act on, as an agent reports it (a CLI's structured output, the sim's
 * draw) rather than guessed from an exit code: the credentials were refused (nothing works until
 * a person fixes them), a usage or rate limit holds until a known time, or the model is
 * overloaded (worth another try later).
 */
export type AgentFailureClass =
  | { kind: 'auth'; message: string }
  | { kind: 'usage-limit'; message: string /** When the limit resets (ms since the epoch), when the agent said. */; resetAt: number | null }
  | { kind: 'overloaded'; message: string };

/** How long the world holds after a usage limit whose reset the agent did not say. */
export const DEFAULT_LIMIT_HOLD_MS = 5 * 60_000;

/** Refused credentials: fatal (the circuit opens and the run stops), as the built-in openai agent's are. */
export function authFailedError(label: string, message: string): GenesisError {
  return new GenesisError('agent-auth-failed', `the model endpoint refused the credentials of ${label}: ${message}`, {
    hint: "check the API key variable the agent's CLI reads (agent.env, or its login in agent.homeFiles) and agent.baseUrl",
  });
}

/** A limit or an overload as the episode records it: a usage limit holds the world until its reset, an overloaded model is tried again later; neither is charged. */
export function episodeFailureOf(failure: Exclude<AgentFailureClass, { kind: 'auth' }>, now = Date.now()): NonNullable<AgentRunResult['failure']> {
  if (failure.kind === 'overloaded') return { reason: 'agent-overloaded', message: `the model is overloaded: ${failure.message}` };
  const until = failure.resetAt ?? now + DEFAULT_LIMIT_HOLD_MS;
  const when = failure.resetAt === null ? 'its reset time is unknown: the world holds until' : 'it resets at';
  return {
    reason: 'agent-usage-limit',
    message: `the model endpoint's usage or rate limit is reached (${failure.message}); ${when} ${new Date(until).toISOString()}`,
    holdUntil: until,
  };
}
