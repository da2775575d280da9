import { isGenesisError, type ErrorCode } from '../../errors/genesis-error.js';

/** Status codes of the GenesisError codes the API answers with; anything else is a 500. */
const STATUS_OF_CODE: Partial<Record<ErrorCode, number>> = {
  'task-not-found': 404,
  'episode-not-found': 404,
  'task-not-blocked': 409,
  'review-not-awaiting': 409,
  'review-decided': 409,
  'invalid-argument': 400,
  'task-not-done': 409,
  'reopen-reason-required': 400,
  'steering-timeout': 503,
  'retry-note-too-long': 400,
  'bad-request': 400,
  'manifest-invalid': 400,
  'task-exists': 409,
  'run-in-progress': 409,
  'run-held-elsewhere': 409,
  'no-run': 409,
  'run-not-started': 500,
  'not-available': 501,
};

// JSON has no Infinity: a horizon is Infinity when nothing ever failed, and must not become null
// (which means "unknown" everywhere else in this API).
function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
}

/** A JSON response that keeps Infinity as the string "Infinity". */
export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value, replacer), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

/**
 * Turns an error into the API's error body `{ error: { code, message, hint } }`. A GenesisError
 * keeps its code and hint; anything else is an internal error whose details go to the log only.
 */
export function errorResponse(error: unknown, log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Response {
  if (isGenesisError(error)) {
    const status = STATUS_OF_CODE[error.code] ?? 500;
    if (status === 500) log(`genesis serve: ${error.message} [${error.code}]`);
    return jsonResponse({ error: { code: error.code, message: error.message, hint: error.hint ?? null } }, status);
  }
  log(`genesis serve: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return jsonResponse({ error: { code: 'internal' satisfies ErrorCode, message: 'internal error; the server log has the details', hint: null } }, 500);
}
