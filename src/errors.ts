/**
 * The one error type Genesis throws on purpose. `code` is stable (scripts and tests match on it),
 * `hint` tells the user what to do next, and `retryable` says whether trying the same thing again
 * could help: data, not a guess made at the catch site.
 */
export class GenesisError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly retryable: boolean;

  constructor(
    code: string,
    message: string,
    options: { hint?: string; cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GenesisError';
    this.code = code;
    this.hint = options.hint;
    this.retryable = options.retryable ?? false;
  }
}

/** Unlike instanceof, this works when two copies of the module are loaded (tsx and dist). */
export function isGenesisError(error: unknown): error is GenesisError {
  return error instanceof Error && error.name === 'GenesisError' && 'code' in error;
}
