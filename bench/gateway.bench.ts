/**
 * What the model gateway adds to a model call on this host's loopback: the same request sent to a
 * model server directly and through an episode's listener of the gateway (with its key swapped,
 * its usage read and its conversation recorded), one after the other in turns so that load from
 * anything else falls on both alike. Two shapes: a small JSON answer (the latency a call pays) and
 * a long stream of server-sent events (whether streamed tokens reach the agent as fast).
 */
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelGateway } from '../src/channel/model-gateway.js';
import { formatTable } from '../src/cli/output.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { cell, ms, summarize } from './lib/stats.js';

/** Events of the long stream, each a token delta as Anthropic sends it. */
const STREAM_EVENTS = 2_000;
/** A stream at a fast model's pace: this many events, one every PACE_MS (500 tokens a second). */
const PACED_EVENTS = 200;
const PACE_MS = 2;

function modelServer(): Server {
  return createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.includes('paced')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 1000, output_tokens: 1 } } })}\n\n`);
        let sent = 0;
        const timer = setInterval(() => {
          res.write(
            `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `token ${sent} ` } })}\n\n`,
          );
          if (++sent < PACED_EVENTS) return;
          clearInterval(timer);
          res.write(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: PACED_EVENTS } })}\n\n`);
          res.end(`event: message_stop\ndata: {"type":"message_stop"}\n\n`);
        }, PACE_MS);
        return;
      }
      if (req.url?.includes('stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 1000, output_tokens: 1 } } })}\n\n`);
        for (let i = 0; i < STREAM_EVENTS; i++) {
          res.write(
            `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `token ${i} ` } })}\n\n`,
          );
        }
        res.write(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: STREAM_EVENTS } })}\n\n`);
        res.end(`event: message_stop\ndata: {"type":"message_stop"}\n\n`);
        return;
      }
      const body = JSON.stringify({ id: 'msg', type: 'message', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 1000, output_tokens: 5 } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** One call; resolves with the milliseconds to its last byte. */
function call(port: number, path: string, key: string): Promise<number> {
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: keepAlive,
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const rounds = ctx.quick ? 50 : 500;
  const streams = ctx.quick ? 5 : 40;
  const server = modelServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const gateway = new ModelGateway();
  const modelPort = (server.address() as AddressInfo).port;
  const channel = await gateway.open({
    label: 'bench',
    upstream: new URL(`http://127.0.0.1:${modelPort}`),
    credentials: { ANTHROPIC_API_KEY: 'sk-bench-real-key' },
    stallMs: 60_000,
    priceOf: () => ({ inputPerMTok: 3, outputPerMTok: 15 }),
    onFailure: () => undefined,
  });
  const standIn = channel.env.ANTHROPIC_API_KEY!;
  try {
    const direct: number[] = [];
    const through: number[] = [];
    // Warm both paths (connections, JIT) before measuring.
    for (let i = 0; i < 20; i++) {
      await call(modelPort, '/v1/messages', 'sk-bench-real-key');
      await call(channel.port, '/v1/messages', standIn);
    }
    for (let i = 0; i < rounds; i++) {
      direct.push(await call(modelPort, '/v1/messages', 'sk-bench-real-key'));
      through.push(await call(channel.port, '/v1/messages', standIn));
    }
    const directStream: number[] = [];
    const throughStream: number[] = [];
    for (let i = 0; i < streams; i++) {
      directStream.push(await call(modelPort, '/v1/messages?stream', 'sk-bench-real-key'));
      throughStream.push(await call(channel.port, '/v1/messages?stream', standIn));
    }
    const directPaced: number[] = [];
    const throughPaced: number[] = [];
    for (let i = 0; i < Math.max(3, streams / 4); i++) {
      directPaced.push(await call(modelPort, '/v1/messages?paced', 'sk-bench-real-key'));
      throughPaced.push(await call(channel.port, '/v1/messages?paced', standIn));
    }
    const added = summarize(through.map((t, i) => t - direct[i]!));
    const rate = (runs: number[]) => Math.round(STREAM_EVENTS / (summarize(runs).median / 1000));
    const measured = channel.channel.report().tokens;
    const table = formatTable(
      ['call', 'direct ms', 'through the gateway ms', 'added ms (median, p90)', 'stream events/s direct → gateway'],
      [
        ['JSON answer', cell(summarize(direct)), cell(summarize(through)), `${ms(added.median)} (${ms(added.p90)})`, '-'],
        [
          `SSE stream of ${STREAM_EVENTS} events`,
          cell(summarize(directStream)),
          cell(summarize(throughStream)),
          `${ms(summarize(throughStream).median - summarize(directStream).median)}`,
          `${rate(directStream)} → ${rate(throughStream)}`,
        ],
        [
          `SSE stream of ${PACED_EVENTS} events at ${1000 / PACE_MS}/s (a fast model)`,
          cell(summarize(directPaced)),
          cell(summarize(throughPaced)),
          `${ms(summarize(throughPaced).median - summarize(directPaced).median)}`,
          `${Math.round(PACED_EVENTS / (summarize(directPaced).median / 1000))} → ${Math.round(PACED_EVENTS / (summarize(throughPaced).median / 1000))}`,
        ],
      ],
    );
    return {
      title: 'The model gateway on loopback: added latency per call, and streamed throughput',
      table,
      notes: [
        `${rounds} JSON calls and ${streams} streams each way, in turns, over kept-alive connections; cells: median (p90, min–max)`,
        `the gateway measured ${measured ? `${measured.inputTokens} input and ${measured.outputTokens} output tokens` : 'no tokens'} over ${channel.channel.report().calls} calls (its usage reading is part of what is timed)`,
        'target: under 5 ms added per call at the median, and no lower throughput of streamed events',
      ],
    };
  } finally {
    channel.close();
    gateway.close();
    keepAlive.destroy();
    server.close();
  }
}
