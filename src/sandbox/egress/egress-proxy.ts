import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/**
 * The small forward proxy of an agent with an egress allow-list (`agent.network.allow`): HTTP
 * CONNECT (TLS to the model) and plain HTTP, to listed hosts only. It listens on this host's
 * loopback; the agent's network namespace lets the agent reach that one port and nothing else
 * (see agent-netns.ts), and each launch has its own proxy, password and count of refused requests.
 */
export interface EgressProxy {
  port: number;
  /** The proxy URL the agent's HTTP_PROXY names, as seen from inside its namespace. */
  urlFrom(host: string): string;
  /** Requests refused so far: a host not on the list, or no password. */
  refused(): number;
  close(): Promise<void>;
}

/**
 * Whether `host` is on the allow-list: exact names, and `*` for any run of characters
 * (`*.openai.com` admits `api.openai.com`, not `openai.com`). Case-insensitive; a trailing dot and
 * IPv6 brackets are ignored.
 */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return allow.some((pattern) => {
    const source = pattern
      .toLowerCase()
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${source}$`).test(name);
  });
}

/** Splits `host:port` (CONNECT's target) or a URL's authority; null when it is not one. */
export function targetOf(authority: string, defaultPort: number): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:/\s]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!match) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  return port > 0 && port < 65536 ? { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port } : null;
}

export async function startEgressProxy(allow: readonly string[]): Promise<EgressProxy> {
  const password = randomBytes(16).toString('hex');
  const expected = `Basic ${Buffer.from(`genesis:${password}`).toString('base64')}`;
  let refused = 0;
  const sockets = new Set<Socket>();
  const admits = (req: IncomingMessage, host: string) => req.headers['proxy-authorization'] === expected && hostAllowed(host, allow);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // not an absolute URL: not a proxy request
    }
    if (url?.protocol !== 'http:' || !admits(req, url.hostname)) {
      refused++;
      res.writeHead(url ? 403 : 400, { 'content-type': 'text/plain' }).end(`genesis egress: ${url?.hostname ?? 'that'} is not on agent.network.allow\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request({ host: url.hostname, port: url.port || 80, method: req.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const target = targetOf(req.url ?? '', 443);
    if (!target || !admits(req, target.host)) {
      refused++;
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n'));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    urlFrom: (host) => `http://genesis:${password}@${host}:${port}`,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
