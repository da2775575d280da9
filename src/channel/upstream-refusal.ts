import type { IncomingHttpHeaders } from 'node:http';

/**
 * A refusal from the model's side that the run must act on, read where it happens (the status
 * and headers of the vendor's answer) instead of from whatever each CLI chooses to print.
 */
export type UpstreamRefusal =
  | { kind: 'auth'; status: number; message: string }
  | { kind: 'usage-limit'; status: number; message: string /** When the limit resets (ms since the epoch), when the vendor said. */; resetAt: number | null }
  | { kind: 'overloaded'; status: number; message: string };

/** What a vendor means by an HTTP status: refused credentials, a usage or rate limit, an overloaded model; null for anything else. */
export function refusalKindOf(status: number | null): UpstreamRefusal['kind'] | null {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'usage-limit';
  if (status === 529 || status === 503) return 'overloaded';
  return null;
}

/** The refusal an answer with `status` is, or null for anything the agent's CLI should simply see. */
export function refusalOf(status: number, headers: IncomingHttpHeaders, body: string, now = Date.now()): UpstreamRefusal | null {
  const message = `${status} ${messageOf(body)}`.trim();
  switch (refusalKindOf(status)) {
    case 'auth':
      return { kind: 'auth', status, message };
    case 'usage-limit':
      return { kind: 'usage-limit', status, message, resetAt: resetOf(headers, body, now) };
    case 'overloaded':
      return { kind: 'overloaded', status, message };
    default:
      return null;
  }
}

/** The vendor's own words from an error body, bounded, on one line. */
function messageOf(body: string): string {
  let text = body;
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const error = json.error;
    text = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : typeof json.message === 'string' ? json.message : body;
  } catch {
    // Not JSON: the text itself.
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * When a usage or rate limit resets, by what the vendor sent: `retry-after` (seconds or a date),
 * Anthropic's `anthropic-ratelimit-*-reset` (a time; the unified one in epoch seconds), OpenAI's
 * `x-ratelimit-reset-*` (a duration such as `6m0s`), Gemini's RetryInfo `retryDelay` in the body,
 * a `resets_in_seconds` in the body. Of the limit headers, those whose `remaining` is 0 say which
 * limit was hit; without that, the latest reset is taken (waiting a little long beats a refusal).
 */
export function resetOf(headers: IncomingHttpHeaders, body: string, now = Date.now()): number | null {
  const after = header(headers, 'retry-after');
  if (after !== undefined) {
    const seconds = Number(after);
    if (after.trim() !== '' && Number.isFinite(seconds)) return now + Math.max(0, seconds) * 1000;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return date;
  }
  const hit: number[] = [];
  const all: number[] = [];
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined) continue;
    let at: number | null = null;
    let limit = '';
    if (name === 'anthropic-ratelimit-unified-reset') {
      const epoch = Number(value);
      at = Number.isFinite(epoch) ? epoch * 1000 : null;
      limit = 'anthropic-ratelimit-unified';
    } else if (name.startsWith('anthropic-ratelimit-') && name.endsWith('-reset')) {
      const date = Date.parse(value);
      at = Number.isFinite(date) ? date : null;
      limit = name.slice(0, -'-reset'.length);
    } else if (name.startsWith('x-ratelimit-reset-')) {
      const ms = durationMs(value);
      at = ms === null ? null : now + ms;
      limit = `x-ratelimit-remaining-${name.slice('x-ratelimit-reset-'.length)}`;
    }
    if (at === null) continue;
    all.push(at);
    const remaining = header(headers, limit.startsWith('x-ratelimit-') ? limit : `${limit}-remaining`);
    if (remaining !== undefined && Number(remaining) === 0) hit.push(at);
  }
  const pick = hit.length > 0 ? hit : all;
  if (pick.length > 0) return Math.max(...pick);
  return resetInBody(body, now);
}

/** `6m0s`, `1h2m3.5s`, `20ms`, `30s`, `2.5` (seconds): milliseconds, or null. */
export function durationMs(text: string): number | null {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const parts = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(value);
  if (!parts || value === '') return null;
  const [, h, m, s, ms] = parts;
  return Number(h ?? 0) * 3_600_000 + Number(m ?? 0) * 60_000 + Number(s ?? 0) * 1000 + Number(ms ?? 0);
}

function resetInBody(body: string, now: number): number | null {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  const error = (json as { error?: Record<string, unknown> } | null)?.error;
  if (!error || typeof error !== 'object') return null;
  if (typeof error.resets_in_seconds === 'number') return now + error.resets_in_seconds * 1000;
  const details = Array.isArray(error.details) ? (error.details as Array<Record<string, unknown>>) : [];
  const retry = details.find((d) => typeof d?.['@type'] === 'string' && (d['@type'] as string).endsWith('google.rpc.RetryInfo'));
  const delay = typeof retry?.retryDelay === 'string' ? durationMs(retry.retryDelay) : null;
  return delay === null ? null : now + delay;
}
