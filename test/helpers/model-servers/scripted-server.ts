import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * How a scripted model server answers its model calls:
 * - `work`: the CLI's own file-writing tool call, then (once the tool's result comes back) a final message;
 * - `auth`: every call refused as the vendor refuses a bad key (401);
 * - `usage-limit`: every call refused as the vendor's rate or usage limit, with a reset time;
 * - `overloaded`: every call refused as the vendor's overloaded model (529 or 503);
 * - `stall`: every model call accepted and never answered (a model server that hangs);
 * - `cut`: every model call answered with the start of a stream, then the connection closed.
 * The last two are the same for every vendor: the server's own network faults.
 */
export type ServerMode = 'work' | 'auth' | 'usage-limit' | 'overloaded' | 'stall' | 'cut';

/** One request the server received, in order. */
export interface LoggedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What a model call was answered with: its usage as the server reported it to the CLI. */
export interface SentUsage {
  input: number;
  output: number;
  /** The call carried tools (a working turn), not a side call (a title, a check). */
  turn: boolean;
}

export interface ScriptedServer {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly port: number;
  mode: ServerMode;
  /** The file the tool call writes, relative to the workspace, and its content. */
  readonly file: { path: string; content: string };
  /**
   * A shell command a working turn runs with the CLI's own shell tool in place of writing `file`
   * (a cheating model's tool call), or null to write the file.
   */
  command: string | null;
  /** The final text of a working turn, once its tool's result came back. */
  say: string;
  /** Every request received. */
  readonly requests: LoggedRequest[];
  /** Usage reported, one entry per answered model call. */
  readonly sent: SentUsage[];
  /** Seconds after now that a usage-limit refusal names as its reset. */
  resetAfterSec: number;
  /** Refusals still to come before `mode` applies: each model call takes the first, `count` times. */
  script: Array<{ mode: Exclude<ServerMode, 'work'>; count: number }>;
  /** Stops listening (connections in flight are cut) and listens again on the same port: a model server restarted. */
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: string;
  json: Record<string, unknown>;
  server: ScriptedServer;
}

/** The usage a server reports for the n-th model call (from 0): distinct figures, so a sum that skips or doubles a call shows. */
export function usageForCall(n: number, turn: boolean): SentUsage {
  return { input: 1000 + 100 * n, output: 20 + n, turn };
}

/** Writes a server-sent event (`event:` line only when named). */
export function writeEvent(res: ServerResponse, data: unknown, event?: string): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * An HTTP server on 127.0.0.1 that logs every request and hands each to `handle`. An upgrade
 * (a WebSocket attempt) is refused with 426 and no upgrade, so a CLI that tries one falls back to
 * plain HTTP. Nothing here reaches outside this machine.
 */
export async function startScriptedServer(
  handle: (exchange: Exchange) => unknown,
  options: { mode?: ServerMode; file?: { path: string; content: string }; tls?: { key: string; cert: string } } = {},
): Promise<ScriptedServer> {
  const requests: LoggedRequest[] = [];
  const sent: SentUsage[] = [];
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      let json: Record<string, unknown> = {};
      try {
        const value: unknown = JSON.parse(body);
        if (value && typeof value === 'object' && !Array.isArray(value)) json = value as Record<string, unknown>;
      } catch {
        // Not JSON: a GET, a probe.
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (networkFault(req.method ?? '', url, res, server)) return;
      Promise.resolve(handle({ req, res, url, body, json, server })).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
        else res.end();
      });
    });
  };
  // Over TLS (a certificate of a test CA), as a hosted vendor answers; plain HTTP otherwise, as a local server does.
  const http: Server = options.tls ? createHttpsServer(options.tls, serve) : createServer(serve);
  http.on('upgrade', (req, socket) => {
    requests.push({ method: `${req.method ?? ''} (upgrade)`, url: req.url ?? '', headers: req.headers, body: '' });
    socket.end('HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  const server: ScriptedServer = {
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    mode: options.mode ?? 'work',
    file: options.file ?? { path: 'hello.txt', content: 'written by the scripted model\n' },
    command: null,
    say: 'Done: the file is written.',
    requests,
    sent,
    resetAfterSec: 30,
    script: [],
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
    restart: async (downMs) => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, downMs));
      http.listen(port, '127.0.0.1');
      await once(http, 'listening');
    },
  };
  return server;
}

/** Model calls are POSTs (a token count is not one); a stall or a cut takes them alike for every vendor. */
function networkFault(method: string, url: URL, res: ServerResponse, server: ScriptedServer): boolean {
  if (method !== 'POST' || /count_?tokens/i.test(url.pathname)) return false;
  const next = server.script[0]?.mode ?? server.mode;
  if (next !== 'stall' && next !== 'cut') return false;
  modeOfCall(server);
  if (next === 'stall') return true;
  startSse(res);
  res.write('data: {"partial": tru');
  setTimeout(() => res.socket?.destroy(), 20);
  return true;
}

/** How the server answers this model call: the next scripted refusal, else its mode. */
export function modeOfCall(server: ScriptedServer): ServerMode {
  const next = server.script[0];
  if (!next) return server.mode;
  if (--next.count <= 0) server.script.shift();
  return next.mode;
}

/** Records and returns the usage of the next model call. */
export function nextUsage(server: ScriptedServer, turn: boolean): SentUsage {
  const usage = usageForCall(server.sent.length, turn);
  server.sent.push(usage);
  return usage;
}

/** The text of every request body, for "the prompt reached the model". */
export function requestText(server: ScriptedServer): string {
  return server.requests.map((r) => r.body).join('\n');
}
