/**
 * One entry of an egress allow-list (`agent.network.allow`): a host pattern and the ports it
 * admits. `host` alone admits the web's ports, 80 and 443 (what a URL without a port reaches);
 * `host:port` that port; `host:*` every port. IPv6 addresses are written in brackets when a port
 * follows (`[::1]:8080`).
 */
export interface AllowEntry {
  /** Lower-case, without brackets; `*` stands for any run of characters. */
  host: string;
  /** The ports admitted; null for every port. */
  ports: readonly number[] | null;
}

const WEB_PORTS = [80, 443] as const;

/** Reads an entry; null when it is not one (the manifest's schema refuses those first). */
export function parseAllowEntry(entry: string): AllowEntry | null {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}|\*))?$/.exec(entry);
  const colons = entry.split(':').length - 1;
  // Two colons or more without brackets: a bare IPv6 address, no port.
  const plain = bracketed || colons > 1 ? null : /^([^:\s[\]]+)(?::(\d{1,5}|\*))?$/.exec(entry);
  const host = bracketed?.[1] ?? (colons > 1 ? entry : plain?.[1]);
  const port = bracketed ? bracketed[2] : plain?.[2];
  if (host === undefined || host === '') return null;
  if (port === '*') return { host: host.toLowerCase(), ports: null };
  if (port === undefined) return { host: host.toLowerCase(), ports: WEB_PORTS };
  const number = Number(port);
  return number > 0 && number < 65536 ? { host: host.toLowerCase(), ports: [number] } : null;
}

/**
 * Whether `host` matches the pattern of an entry: exact names, and `*` for any run of characters
 * (`*.openai.com` admits `api.openai.com`, not `openai.com`). Case-insensitive; a trailing dot and
 * IPv6 brackets are ignored.
 */
export function hostMatches(host: string, pattern: string): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  const source = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(name);
}

/** Whether the list admits a connection to `host` on `port`: some entry matches both. */
export function allowedTarget(host: string, port: number, allow: readonly string[]): boolean {
  return allow.some((text) => {
    const entry = parseAllowEntry(text);
    return entry !== null && hostMatches(host, entry.host) && (entry.ports === null || entry.ports.includes(port));
  });
}
