/** An error body as OpenAI-compatible servers send it: `{ error: { message, type, code } }`. */
export interface ErrorBody {
  message: string;
  type: string;
  code: string;
}

/** The error in a response body, whatever shape the server gave it. */
export function readErrorBody(text: string): ErrorBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { message: text.trim().slice(0, 500), type: '', code: '' };
  }
  const outer = (value ?? {}) as Record<string, unknown>;
  const inner = (typeof outer.error === 'object' && outer.error !== null ? outer.error : outer) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  return { message: str(inner.message) || str(outer.message) || str(outer.error) || text.slice(0, 500), type: str(inner.type), code: str(inner.code) };
}

/**
 * True when the server refused the request because the conversation no longer fits the model's
 * context window. Servers say so differently: OpenAI's code `context_length_exceeded`, vLLM's
 * "maximum context length is … tokens", llama.cpp's type `exceed_context_size_error`.
 */
export function isContextLengthError(status: number, body: ErrorBody): boolean {
  if (status === 413) return true;
  if (body.code === 'context_length_exceeded' || /exceed_context/.test(body.type)) return true;
  return /context length|context window|context size|maximum context|too many tokens|prompt is too long/i.test(body.message);
}

/**
 * How long a 429 or 503 asks to wait, in ms: `retry-after-ms` (OpenAI), else `retry-after` in
 * seconds or as an HTTP date; null when the server does not say.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers.get('retry-after');
  if (after === null) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
