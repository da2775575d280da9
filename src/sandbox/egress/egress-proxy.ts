import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { allowedTarget } from './allow-list.js';

/**
 * The small forward proxy of an agent with an egress allow-list (`agent.network.allow`): HTTP
 * CONNECT (TLS to the model) and plain HTTP, to listed hosts and ports only. It listens on this
 * host's loopback; the agent's network namespace lets the agent reach that one port and nothing
 * else (see agent-netns.ts), and each launch has its own proxy, password and count of refused
 * requests.
 *
 * Every upstream connection it opens ends with the client that asked for it: an agent killed in
 * the middle of a request to a model that never answers leaves nothing open, so the process that
 * runs the proxy can exit (`close` ends whatever is left).
 */
export interface EgressProxy {
  port: number;
  /** The proxy URL the agent's HTTP_PROXY names, as seen from inside its namespace. */
  urlFrom(host: string): string;
  /** Requests refused so far: a host or port not on the list, or no password. */
  refused(): number;
  /** Connections open now, to clients and upstream (what `close` would end). */
  openConnections(): number;
  close(): Promise<void>;
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
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const admits = (req: IncomingMessage, host: string, port: number) => req.headers['proxy-authorization'] === expected && allowedTarget(host, port, allow);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // not an absolute URL: not a proxy request
    }
    const port = url?.port ? Number(url.port) : 80;
    if (url?.protocol !== 'http:' || !admits(req, url.hostname.replace(/^\[(.*)\]$/, '$1'), port)) {
      refused++;
      res
        .writeHead(url ? 403 : 400, { 'content-type': 'text/plain' })
        .end(`genesis egress: ${url ? `${url.hostname}:${port}` : 'that'} is not on agent.network.allow\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    // agent: false: a connection of its own, never a pooled one that would outlive the request.
    const upstream = request({ host: url.hostname, port, method: req.method, path: `${url.pathname}${url.search}`, headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('socket', track);
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    });
    // The client went (its agent was killed) before the answer was complete: so does the request.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.on('error', () => undefined);
    const target = targetOf(req.url ?? '', 443);
    if (!target || !admits(req, target.host, target.port)) {
      refused++;
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    let established = false;
    const upstream = connect(target.port, target.host, () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => {
      if (established) client.destroy();
      else client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    });
    // A tunnel ends with either side: pipe() alone leaves the other side open.
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (established) client.destroy();
    });
  });
  server.on('connection', track);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    urlFrom: (host) => `http://genesis:${password}@${host}:${port}`,
    refused: () => refused,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
