import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Where a request carried its key: the place the vendor's SDK puts it, so the real key goes to the same place. */
export type KeyPlace = 'x-api-key' | 'authorization' | 'x-goog-api-key' | 'api-key' | 'query';

const HEADER_PLACES: readonly Exclude<KeyPlace, 'query'>[] = ['x-api-key', 'authorization', 'x-goog-api-key', 'api-key'];

/** Stand-ins look like keys (a CLI may check a key's shape) and say what they are to anyone who finds one. */
const PREFIX = 'genesis-stand-in-';

/** A token for one credential of one episode: meaningless anywhere but at this run's gateway, and there only while the episode runs. */
export function mintStandIn(): string {
  return `${PREFIX}${randomBytes(24).toString('base64url')}`;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The value in one place, the Bearer scheme taken off. */
function keyIn(place: KeyPlace, headers: IncomingHttpHeaders, url: URL): string | undefined {
  if (place === 'query') return url.searchParams.get('key') ?? undefined;
  const value = headerValue(headers, place);
  if (place === 'authorization') return value?.replace(/^Bearer\s+/i, '');
  return value;
}

/** The places that carry a key, each with what it carries. */
export function keysOf(headers: IncomingHttpHeaders, url: URL): Array<{ place: KeyPlace; value: string }> {
  const found: Array<{ place: KeyPlace; value: string }> = [];
  for (const place of [...HEADER_PLACES, 'query'] as const) {
    const value = keyIn(place, headers, url);
    if (value !== undefined && value !== '') found.push({ place, value });
  }
  return found;
}

/**
 * The headers and URL to send upstream: every place that carried a key carries the real one
 * instead (or nothing, for a server that takes no key), so what leaves this host is exactly what
 * the vendor's SDK would have sent with the real key.
 */
export function withRealKey(
  headers: Record<string, string>,
  url: URL,
  places: readonly KeyPlace[],
  real: string | null,
): { headers: Record<string, string>; url: URL } {
  const out = { ...headers };
  const target = new URL(url);
  for (const place of HEADER_PLACES) delete out[place];
  target.searchParams.delete('key');
  if (real !== null) {
    for (const place of places) {
      if (place === 'query') target.searchParams.set('key', real);
      else if (place === 'authorization') out.authorization = `Bearer ${real}`;
      else out[place] = real;
    }
  }
  return { headers: out, url: target };
}
