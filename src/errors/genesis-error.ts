import { errorTraits, type ErrorCode } from './error-codes.js';

export type { ErrorCode } from './error-codes.js';

/**
 * The one error type Genesis throws on purpose. `code` is stable (scripts and tests match on it)
 * and registered in src/errors/error-codes.ts, which says as data whether trying the same
 * thing again could help (`retryable`), whether the run must stop for a person to fix something
 * (`fatal`), and whether it counts against the episode (`charged`); `hint` tells the user what to
 * do next.
 */
export class GenesisError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GenesisError';
    this.code = code;
    this.hint = options.hint;
  }

  /** Transient: the same thing tried again later can succeed. */
  get retryable(): boolean {
    return errorTraits(this.code).retryable;
  }

  /** A configuration mistake or a machine that cannot work: the run stops and says so at once. */
  get fatal(): boolean {
    return errorTraits(this.code).fatal;
  }

  /** Counts as a failed attempt of the episode's task. */
  get charged(): boolean {
    return errorTraits(this.code).charged;
  }
}

/** Unlike instanceof, this works when two copies of the module are loaded (tsx and dist). */
export function isGenesisError(error: unknown): error is GenesisError {
  return error instanceof Error && error.name === 'GenesisError' && 'code' in error;
}
