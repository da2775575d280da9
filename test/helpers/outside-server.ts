import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';

/**
 * An HTTP server standing in for "the outside" (a model's endpoint, a host on the internet): it
 * runs in a network namespace of its own, joined to this host by a veth pair, so it is reached
 * only through this host's routing, as a remote host would be, and is neither this host's
 * loopback nor any of its addresses. This machine may send traffic nowhere else. Needs root
 * and iproute2.
 *
 * The server answers every request with `answer` (or serves the files of `serveDir`), and remembers
 * the requests it was sent.
 */
export interface OutsideServer {
  /** The server's address (an IPv4 address in 10.213.0.0/16). */
  host: string;
  port: number;
  url: string;
  /** The requests received, in order. */
  received(): OutsideRequest[];
  close(): Promise<void>;
}

// With a directory (argv[3]), it serves that directory's files instead (a directory's index.html for a path ending in /).
const SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const dir = process.argv[3];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    process.stdout.write(JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, body }) + '\\n');
    if (!dir) return res.end(process.argv[2]);
    const file = path.join(dir, path.normalize(decodeURIComponent(req.url.split('?')[0])), req.url.endsWith('/') ? 'index.html' : '');
    fs.readFile(file, (error, bytes) => { res.statusCode = error ? 404 : 200; if (file.endsWith('.html')) res.setHeader('content-type', 'text/html'); res.end(error ? '' : bytes); });
  });
});
server.listen(80, process.argv[1], () => process.stdout.write('ready\\n'));
`;

export interface OutsideRequest {
  method: string;
  url: string;
  host: string;
  body: string;
}

export async function startOutsideServer(answer = 'outside', serveDir = ''): Promise<OutsideServer> {
  const id = randomBytes(3).toString('hex');
  const ns = `genesis-outside-${id}`;
  const [near, far] = [`gno${id}`, `gnf${id}`];
  const net = `10.213.${randomInt(0, 256)}.${randomInt(0, 64) * 4}`;
  const base = net.split('.').map(Number);
  const hostAddr = `${base[0]}.${base[1]}.${base[2]}.${base[3]! + 1}`;
  const serverAddr = `${base[0]}.${base[1]}.${base[2]}.${base[3]! + 2}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('netns', 'add', ns);
  try {
    ip('link', 'add', near, 'type', 'veth', 'peer', 'name', far);
    ip('link', 'set', far, 'netns', ns);
    ip('addr', 'add', `${hostAddr}/30`, 'dev', near);
    ip('link', 'set', near, 'up');
    ip('-n', ns, 'addr', 'add', `${serverAddr}/30`, 'dev', far);
    ip('-n', ns, 'link', 'set', far, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    // Answers to the agents' networks behind this host (docker's bridges) go back the same way.
    ip('-n', ns, 'route', 'add', 'default', 'via', hostAddr);
  } catch (error) {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    throw error;
  }
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', SERVER, serverAddr, answer, serveDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buffer = '';
  let ready: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === 'ready') ready();
      else lines.push(line);
    }
  });
  const close = async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  };
  await Promise.race([started, once(child, 'exit').then(() => Promise.reject(new Error(`the outside server in ${ns} did not start`)))]).catch(
    async (e: unknown) => {
      await close();
      throw e;
    },
  );
  return { host: serverAddr, port: 80, url: `http://${serverAddr}/`, received: () => lines.map((l) => JSON.parse(l) as OutsideRequest), close };
}
