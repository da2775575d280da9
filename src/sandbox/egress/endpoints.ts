import { isIP } from 'node:net';

/** A host and port an agent's sandbox lets it reach: the model endpoint its `baseUrl` names. */
export interface AgentEndpoint {
  /** A name or an address, IPv6 without brackets, lower-case. */
  host: string;
  port: number;
  /** The URL it was read from, for messages. */
  url: string;
}

/** The endpoint of an http(s) URL: its host and its port, else the scheme's (443, 80); null for another scheme or no URL. */
export function endpointOfUrl(url: string): AgentEndpoint | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { host, port, url };
}

/**
 * The endpoints an agent's sandbox opens for it: the model its `baseUrl` names, for an agent that
 * calls its model from inside the sandbox (`command`, and the built-in `openai` agent, whose
 * program runs there like a CLI).
 */
export function agentEndpoints(config: { kind: string; baseUrl?: string | undefined }): AgentEndpoint[] {
  if ((config.kind !== 'command' && config.kind !== 'openai') || config.baseUrl === undefined) return [];
  const endpoint = endpointOfUrl(config.baseUrl);
  return endpoint ? [endpoint] : [];
}

/** Whether `host` is this host's loopback: 127.0.0.0/8, ::1 or `localhost` (and its subdomains, RFC 6761). */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1';
}

/** `host:port` as a URL or an allow-list writes it: an IPv6 address in brackets. */
export function hostAndPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** The allow-list entry that admits exactly `endpoint` (`host:port`, `[v6]:port`). */
export function endpointEntry(endpoint: Pick<AgentEndpoint, 'host' | 'port'>): string {
  return hostAndPort(endpoint.host, endpoint.port);
}
