import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/**
 * A git server over smart HTTP, as a forge serves one: a real HTTP server on 127.0.0.1 that hands
 * every request to git's own CGI program, `git http-backend`, with the CGI environment, streams
 * the request body to its stdin and answers with its stdout (CGI headers, then the body). It serves
 * the bare repositories under `root` at http://127.0.0.1:PORT/<name>.git; pushes are taken by a
 * repository with `http.receivepack` set to true, or, with `password`, from any user who gives it
 * (HTTP Basic; a request without it is answered 401, as a private forge does). Closed when the
 * current test ends.
 */
export interface GitHttpServer {
  /** http://127.0.0.1:PORT, with no trailing slash. */
  url: string;
  /** Requests served so far, as "METHOD /path?query STATUS". */
  requests: string[];
  close(): Promise<void>;
}

const open: GitHttpServer[] = [];

afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

export async function serveGitHttp(root: string, options: { password?: string } = {}): Promise<GitHttpServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const served = (status: number) => requests.push(`${req.method} ${req.url} ${status}`);
    const user = basicUser(req, options.password);
    if (options.password !== undefined && !user) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
      return served(401);
    }
    backend(root, req, res, user, served);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const handle: GitHttpServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(handle);
  return handle;
}

function backend(root: string, req: IncomingMessage, res: ServerResponse, user: string | null, served: (status: number) => void): void {
  const [path = '/', query = ''] = (req.url ?? '/').split(/\?(.*)/s);
  // Every request header goes to the CGI program as HTTP_<NAME> (Content-Encoding: gzip, Git-Protocol: version=2, ...).
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [`HTTP_${k.toUpperCase().replace(/-/g, '_')}`, String(v)]));
  const cgi = spawn('git', ['http-backend'], {
    env: {
      ...process.env,
      ...headers,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(path),
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      // Without a length (a chunked body) the backend reads its stdin to the end.
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      // An anonymous request has no user, so the backend takes its pushes only where http.receivepack is true.
      ...(user ? { REMOTE_USER: user } : {}),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => undefined); // the backend may answer (an error) before reading the whole body
  let stderr = '';
  cgi.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let head = Buffer.alloc(0);
  let inBody = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (inBody) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = headerEnd(head);
    if (!end) return;
    inBody = true;
    const status = writeHead(res, head.subarray(0, end.at).toString('latin1'));
    served(status);
    res.write(head.subarray(end.at + end.length));
  });
  cgi.on('close', (code) => {
    if (!inBody) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      served(502);
      return void res.end(`git http-backend exited ${code} without headers: ${stderr}`);
    }
    res.end();
  });
}

/** The user of a request's Basic credentials, when their password is `password` (any, when none is set). */
function basicUser(req: IncomingMessage, password: string | undefined): string | null {
  const m = /^Basic (\S+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return null;
  const [user = '', ...rest] = Buffer.from(m[1]!, 'base64').toString().split(':');
  return user && (password === undefined || rest.join(':') === password) ? user : null;
}

/** Where the CGI header block ends (a blank line, CRLF or LF), if it has. */
function headerEnd(bytes: Buffer): { at: number; length: number } | null {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  return lf >= 0 ? { at: lf, length: 2 } : null;
}

/** Writes the CGI headers as the HTTP response head; `Status: 404 Not Found` sets the status (200 by default). */
function writeHead(res: ServerResponse, block: string): number {
  let status = 200;
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else res.appendHeader(name, value);
  }
  res.statusCode = status;
  return status;
}
