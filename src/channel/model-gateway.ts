import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { GenesisError } from '../errors/genesis-error.js';
import type { AddressInfo, Socket } from 'node:net';
import { apiOfPath, refusalBody, vendorOfApi, type GatewayRefusal, type ModelApi } from './model-apis.js';
import { SseEvents } from './sse-events.js';
import { CallUsage, spendsTokens } from './wire-usage.js';
import { refusalOf } from './upstream-refusal.js';
import { keysOf, mintStandIn, withRealKey, type KeyPlace } from './stand-ins.js';
import { EpisodeChannel, type ChannelFailure, type EpisodeChannelSpec } from './episode-channel.js';
import { credentialIdOf, MemoryLimitHolds, type LimitHolds } from './limit-holds.js';

/** A request body past this is refused (a model call is JSON text: megabytes at most). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** An error body past this is not read for its refusal (it is still forwarded). */
const MAX_ERROR_BYTES = 1024 * 1024;
/** A JSON answer past this is not parsed for its usage. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** Of a streamed answer, what the conversation's record can keep of it (conversation.ts keeps 64 KiB of a body). */
const MAX_RECORDED_STREAM = 64 * 1024;
/** Hop-by-hop headers: they describe one connection, not the message, and are never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length']);
/** Connection failures that mean the model server is not there (rather than that it answered badly). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

export interface GatewayOptions {
  /** The CA certificates trusted for upstream TLS, in place of Node's own (give those too to add one). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The holds shared with the rest of the fleet; this process's own by default. */
  holds?: MemoryLimitHolds;
}

/** One episode's way to its model, as the agent's process sees it. */
export interface OpenedChannel {
  readonly channel: EpisodeChannel;
  /** The stand-in for each credential variable: what the agent gets under the same name. */
  readonly env: Record<string, string>;
  /** The episode's own listener on this host's loopback. */
  readonly port: number;
  /** Ends the episode's channel: its stand-ins are refused from now on, its calls in flight cut. */
  close(): void;
}

export interface OpenSpec extends Omit<EpisodeChannelSpec, 'credentials' | 'credentialId'> {
  /** Credential variables and their real values on this host (null when unset). */
  credentials: Record<string, string | null>;
}

/**
 * The model gateway: the only road from every agent to its model. Each episode gets a listener
 * on this host's loopback and stand-in keys; each request is forwarded to the real endpoint with the real key in the
 * same place, and its answer streamed back unbuffered while the gateway reads what it costs,
 * how it failed, and whether it stalled or was cut. What it must refuse (a spent budget, a held
 * usage limit, an unknown key) it refuses in the vendor's own error shape, so each CLI behaves as
 * it would with its vendor.
 */
export class ModelGateway {
  private readonly inFlight = new Map<EpisodeChannel, Set<() => void>>();
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgents = new Map<string, HttpsAgent>();
  readonly holds: MemoryLimitHolds;
  private readonly ca: GatewayOptions['ca'];
  /** Holds shared beyond this process (a fleet's, in Redis): written with each hold, read before each launch. */
  private shared: LimitHolds | null = null;
  /** Calls in a row, by upstream origin, that found the model unreachable: each wait for it is longer. */
  private readonly outages = new Map<string, number>();

  constructor(options: GatewayOptions = {}) {
    this.ca = options.ca;
    this.holds = options.holds ?? new MemoryLimitHolds();
  }

  /**
   * Opens one episode's channel: a listener of its own on this host's loopback (whatever arrives
   * there is this episode's, so a program that sends no key still reaches a local model) and a
   * stand-in for each credential variable (the real key goes out only in place of one).
   */
  async open(spec: OpenSpec, host = '127.0.0.1'): Promise<OpenedChannel> {
    const credentialId = credentialIdOf(Object.values(spec.credentials));
    const byToken = new Map<string, string | null>();
    const env: Record<string, string> = {};
    for (const [name, real] of Object.entries(spec.credentials)) {
      const token = mintStandIn();
      env[name] = token;
      byToken.set(token, real);
    }
    const channel = new EpisodeChannel({ ...spec, credentials: byToken, credentialId });
    const server = createServer((req, res) => {
      // Whatever goes wrong in here ends the call, says why, and never takes the process down.
      this.handle(channel, req, res).catch((error: unknown) => {
        channel.fail({ kind: 'unreachable', message: `the gateway could not forward the call: ${error instanceof Error ? error.message : String(error)}` });
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { 'content-type': 'text/plain' }).end(error instanceof Error ? error.message : String(error));
      });
    });
    // Codex tries a WebSocket first; refused, it speaks plain HTTP, which the gateway can read.
    server.on('upgrade', (_req, socket: Socket) => socket.end('HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    server.unref();
    this.inFlight.set(channel, new Set());
    return {
      channel,
      env,
      port: (server.address() as AddressInfo).port,
      close: () => {
        channel.closed = true;
        for (const cut of this.inFlight.get(channel) ?? []) cut();
        this.inFlight.delete(channel);
        server.closeAllConnections();
        server.close();
      },
    };
  }

  /** Shares this process's usage-limit holds with others (the workers of a fleet). */
  shareHolds(store: LimitHolds): void {
    this.shared = store;
  }

  /** The hold in force on these credentials (a usage limit another episode met, here or on another worker), or null. */
  async heldFor(credentials: Record<string, string | null>): Promise<{ untilMs: number; message: string } | null> {
    const id = credentialIdOf(Object.values(credentials));
    if (!id) return null;
    const here = this.holds.current(id);
    if (here || !this.shared) return here;
    const untilMs = await this.shared.until(id).catch(() => null);
    if (untilMs === null) return null;
    const message = (await this.shared.message(id).catch(() => null)) ?? 'a usage limit another worker met';
    await this.holds.hold(id, untilMs, message);
    return this.holds.current(id);
  }

  /** The model at `origin` was found unreachable (by a probe or a call): how many times in a row now. */
  unreachable(origin: string): number {
    const streak = (this.outages.get(origin) ?? 0) + 1;
    this.outages.set(origin, streak);
    return streak;
  }

  /** The model at `origin` answered: the next outage waits from the start again. */
  answered(origin: string): void {
    this.outages.delete(origin);
  }

  /**
   * The agent for https upstreams, trusting the usual authorities and those of the PEM file
   * GENESIS_MODEL_CA names when it is set (a company's gateway, a local server with a certificate
   * of its own; NODE_EXTRA_CA_CERTS works too, but only as Genesis starts), or exactly `ca`.
   */
  private httpsAgent(): HttpsAgent {
    const file = this.ca ? '' : (process.env.GENESIS_MODEL_CA ?? '');
    let agent = this.httpsAgents.get(file);
    if (!agent) {
      const ca = this.ca ?? (file ? [...rootCertificates, readCa(file)] : undefined);
      agent = new HttpsAgent({ keepAlive: true, ...(ca ? { ca } : {}) });
      this.httpsAgents.set(file, agent);
    }
    return agent;
  }

  close(): void {
    this.httpAgent.destroy();
    for (const agent of this.httpsAgents.values()) agent.destroy();
  }

  private async handle(channel: EpisodeChannel, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const api = apiOfPath(url.pathname);
    const vendor = vendorOfApi(api);
    const refuse = (refusal: GatewayRefusal) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(refusal.status, {
        'content-type': 'application/json',
        ...(refusal.retryAfterSec === undefined ? {} : { 'retry-after': String(Math.ceil(refusal.retryAfterSec)) }),
      });
      res.end(JSON.stringify(refusalBody(vendor, refusal)));
    };
    const spec = channel.spec;
    const keys = keysOf(req.headers, url);
    const strange = keys.find((k) => !spec.credentials.has(k.value));
    if (strange) {
      req.resume();
      return refuse({
        status: 401,
        kind: 'auth',
        message: "this key is not this episode's: the agent's keys are stand-ins, good only at this gateway while their episode runs",
      });
    }
    const real = keys.length > 0 ? (spec.credentials.get(keys[0]!.value) ?? null) : null;
    const body = await readBody(req);
    if (body === null) return refuse({ status: 413, kind: 'too-large', message: `the request is over ${MAX_REQUEST_BYTES} bytes` });
    if (channel.closed) return refuse({ status: 401, kind: 'auth', message: 'the episode of this key is over' });
    const held = spec.credentialId ? this.holds.current(spec.credentialId) : null;
    if (held) {
      channel.fail({ kind: 'usage-limit', message: held.message, resetAt: held.untilMs });
      return refuse({ status: 429, kind: 'rate-limit', message: held.message, retryAfterSec: (held.untilMs - Date.now()) / 1000 });
    }
    const over = channel.overBudget();
    if (over) {
      channel.fail({ kind: 'budget', ...over });
      return refuse({ status: 429, kind: 'budget', message: over.message });
    }
    const { text: sent, model } = prepareBody(api, body, url.pathname);
    const places: KeyPlace[] = keys.map((k) => k.place);
    const target = new URL(spec.upstream.pathname.replace(/\/$/, '') + url.pathname.slice(upstreamPrefix(spec.upstream, url.pathname)), spec.upstream);
    target.search = url.search;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    // The answer is read on its way (usage, end markers): it must come as the text it is.
    headers['accept-encoding'] = 'identity';
    const out = withRealKey(headers, target, places, real);
    out.headers['content-length'] = String(Buffer.byteLength(sent));
    await this.forward(channel, api, model, req, res, out, sent, refuse);
  }

  private forward(
    channel: EpisodeChannel,
    api: ModelApi,
    model: string | null,
    req: IncomingMessage,
    res: ServerResponse,
    out: { headers: Record<string, string>; url: URL },
    sent: string,
    refuse: (refusal: GatewayRefusal) => void,
  ): Promise<void> {
    const spec = channel.spec;
    const started = Date.now();
    let firstByte: number | null = null;
    const usage = new CallUsage(api);
    const sse = new SseEvents((event) => {
      usage.event(event);
    });
    const answer: Buffer[] = [];
    let answerBytes = 0;
    let problem: string | undefined;
    let status: number | null = null;
    let finished = false;
    const https = out.url.protocol === 'https:';
    return new Promise<void>((resolve) => {
      const cuts = this.inFlight.get(channel);
      const settle = () => {
        if (finished) return;
        finished = true;
        clearTimeout(stall);
        cuts?.delete(cut);
        const spends = spendsTokens(out.url.pathname);
        const tokens = spends ? usage.current() : null;
        const cost = channel.settle(model, tokens, status, spends && !problem);
        const text = Buffer.concat(answer).toString('utf8');
        channel.conversation.add(
          {
            at: new Date(started).toISOString(),
            method: req.method ?? 'POST',
            path: out.url.pathname,
            api,
            model,
            status,
            ...(problem ? { problem } : {}),
            durationMs: Date.now() - started,
            firstByteMs: firstByte === null ? null : firstByte - started,
            tokens: tokens ? { input: tokens.inputTokens, output: tokens.outputTokens, cached: tokens.cachedTokens, reasoning: tokens.reasoningTokens } : null,
            costUsd: cost === null ? null : Math.round(cost * 1e6) / 1e6,
          },
          sent,
          text,
        );
        resolve();
      };
      const upstream = (https ? httpsRequest : httpRequest)(out.url, {
        method: req.method ?? 'POST',
        headers: out.headers as OutgoingHttpHeaders,
        agent: https ? this.httpsAgent() : this.httpAgent,
      });
      const fail = (failure: ChannelFailure, refusal: GatewayRefusal | null) => {
        problem = failure.kind;
        channel.fail(failure);
        if (refusal && !res.headersSent) refuse(refusal);
        else res.destroy();
        upstream.destroy();
        settle();
      };
      let stall: NodeJS.Timeout = setTimeout(() => undefined, 0);
      const arm = () => {
        clearTimeout(stall);
        stall = setTimeout(() => {
          const seconds = Math.round(spec.stallMs / 1000);
          fail(
            { kind: 'stalled', message: `the model sent nothing for ${seconds} s (agent.stallSec) on ${out.url.pathname}` },
            { status: 504, kind: 'timeout', message: `no byte from the model for ${seconds} s` },
          );
        }, spec.stallMs);
      };
      const cut = () => fail({ kind: 'stream-cut', message: 'the episode ended with the call in flight' }, null);
      cuts?.add(cut);
      // The agent gave up on its call (its own timeout, or it was killed): so does the gateway.
      res.on('close', () => {
        if (!res.writableFinished && !finished) {
          problem ??= 'agent-closed';
          upstream.destroy();
          settle();
        }
      });
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (finished) return;
        if (status === null && UNREACHABLE.has(error.code ?? '')) {
          fail(
            { kind: 'unreachable', message: `the model endpoint ${spec.upstream.origin} cannot be reached (${error.code})` },
            { status: 503, kind: 'unavailable', message: `the model endpoint cannot be reached (${error.code})` },
          );
        } else if (status !== null) {
          fail({ kind: 'stream-cut', message: `the model's answer on ${out.url.pathname} was cut (${error.code ?? error.message})` }, null);
        } else {
          fail(
            { kind: 'unreachable', message: `the request to ${spec.upstream.origin} failed: ${error.message}` },
            { status: 502, kind: 'unavailable', message: error.message },
          );
        }
      });
      upstream.on('response', (up) => {
        this.answered(spec.upstream.origin);
        firstByte = Date.now();
        status = up.statusCode ?? 502;
        arm();
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(up.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
        const streamed = String(up.headers['content-type'] ?? '').includes('text/event-stream');
        if (status >= 400) {
          // An error is small: read whole, classified, then passed on as the vendor sent it.
          const parts: Buffer[] = [];
          let size = 0;
          up.on('data', (chunk: Buffer) => {
            arm();
            size += chunk.length;
            if (size <= MAX_ERROR_BYTES) parts.push(chunk);
          });
          up.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            answer.push(...parts);
            const refusal = refusalOf(status!, up.headers, text);
            if (refusal?.kind === 'auth') channel.fail({ kind: 'auth', message: `${spec.label}: the model endpoint answered ${refusal.message}` });
            else if (refusal?.kind === 'usage-limit') {
              const message = `the model endpoint answered ${refusal.message}`;
              if (spec.credentialId && refusal.resetAt !== null) {
                this.holds.hold(spec.credentialId, refusal.resetAt, message).catch(() => undefined);
                this.shared?.hold(spec.credentialId, refusal.resetAt, message).catch(() => undefined);
              }
              channel.fail({ kind: 'usage-limit', message, resetAt: refusal.resetAt });
            } else if (refusal?.kind === 'overloaded') channel.overloaded(`the model endpoint answered ${refusal.message}`);
            problem = refusal?.kind;
            if (!res.headersSent) {
              res.writeHead(status!, { ...headers, 'content-length': String(Buffer.byteLength(text)) });
              res.end(text);
            }
            settle();
          });
          up.on('error', () => undefined);
          return;
        }
        res.writeHead(status, headers);
        if (streamed) res.flushHeaders();
        up.on('data', (chunk: Buffer) => {
          arm();
          if (!res.destroyed) res.write(chunk);
          // A JSON answer is kept whole for its usage; of a stream, only what the record keeps (its events are read as they pass).
          if (answerBytes < (streamed ? MAX_RECORDED_STREAM : MAX_JSON_BYTES)) answer.push(chunk);
          answerBytes += chunk.length;
          if (streamed) sse.push(chunk);
        });
        up.on('aborted', () => {
          if (!finished) fail({ kind: 'stream-cut', message: `the model's answer on ${out.url.pathname} was cut` }, null);
        });
        up.on('end', () => {
          if (finished) return;
          if (streamed) sse.end();
          else if (answerBytes <= MAX_JSON_BYTES) usage.body(Buffer.concat(answer).toString('utf8'));
          if (streamed && !usage.complete() && status === 200) {
            // The server closed the stream before its end marker: the CLI sees the same cut.
            fail({ kind: 'stream-cut', message: `the model's stream on ${out.url.pathname} ended before its end` }, null);
            return;
          }
          const inStream = usage.streamError();
          if (inStream && /overloaded/i.test(inStream)) channel.overloaded(`the model's stream reported ${inStream}`);
          res.end();
          settle();
        });
      });
      arm();
      upstream.end(sent);
    });
  }
}

function readCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new GenesisError('invalid-argument', `GENESIS_MODEL_CA names ${file}, which cannot be read: ${(error as Error).message}`, {
      hint: 'point GENESIS_MODEL_CA at a PEM file of the certificate authority of your model endpoint, or unset it',
    });
  }
}

/** The request body, whole, or null when it is over the bound. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return null;
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

/**
 * The body to send and the model it names. A streamed Chat Completions call is asked for its
 * usage (`stream_options.include_usage`): without it the stream carries no token counts at all.
 */
function prepareBody(api: ModelApi, body: Buffer, path: string): { text: string; model: string | null } {
  const text = body.toString('utf8');
  const fromPath = /\/models\/([^/:]+)/.exec(path)?.[1] ?? null;
  if (text.length === 0) return { text, model: fromPath };
  let json: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return { text, model: fromPath };
    json = value as Record<string, unknown>;
  } catch {
    return { text, model: fromPath };
  }
  const model = typeof json.model === 'string' ? json.model : fromPath;
  if (api === 'openai-chat' && json.stream === true) {
    const options = (json.stream_options && typeof json.stream_options === 'object' ? json.stream_options : {}) as Record<string, unknown>;
    if (options.include_usage !== true) return { text: JSON.stringify({ ...json, stream_options: { ...options, include_usage: true } }), model };
  }
  return { text, model };
}

/**
 * How much of the request's path is the upstream's own root already: an agent given the
 * gateway's URL with the upstream's path (`/v1`) asks for `/v1/responses`; the request goes to the
 * upstream's `/v1/responses`, not `/v1/v1/responses`.
 */
function upstreamPrefix(upstream: URL, path: string): number {
  const root = upstream.pathname.replace(/\/$/, '');
  return root !== '' && (path === root || path.startsWith(`${root}/`)) ? root.length : 0;
}
