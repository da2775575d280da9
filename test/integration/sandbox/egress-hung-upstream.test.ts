import { once } from 'node:events';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { startEgressProxy, type EgressProxy } from '../../../src/sandbox/egress/egress-proxy.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

/** A model server that takes connections and never answers: each one stays open until its client ends it. */
interface HungServer {
  port: number;
  /** Connections open now. */
  open(): number;
  /** Connections taken so far. */
  taken(): number;
  close(): void;
}

async function startHungServer(): Promise<HungServer> {
  const sockets = new Set<Socket>();
  let taken = 0;
  const server: Server = createServer((socket) => {
    taken++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    open: () => sockets.size,
    taken: () => taken,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function authOf(proxy: EgressProxy): string {
  const url = new URL(proxy.urlFrom('127.0.0.1'));
  return `Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`;
}

describe('the egress proxy, when its client goes in the middle of a request to a model that never answers', () => {
  it('ends the plain HTTP request it started upstream', async () => {
    const hung = await startHungServer();
    cleanups.push(() => hung.close());
    const proxy = await startEgressProxy([`127.0.0.1:${hung.port}`]);
    cleanups.push(() => proxy.close());
    const client = request({
      host: '127.0.0.1',
      port: proxy.port,
      method: 'POST',
      path: `http://127.0.0.1:${hung.port}/v1/messages`,
      headers: { 'proxy-authorization': authOf(proxy) },
    });
    client.on('error', () => undefined);
    client.write('{"stream":true}');
    await until(() => hung.open() === 1, 'the request reached the hung server');
    client.destroy();
    await until(() => hung.open() === 0, 'the upstream connection ended');
    await until(() => proxy.openConnections() === 0, 'the proxy holds no connection');
    expect(hung.taken()).toBe(1);
  });

  it('ends the CONNECT tunnel it opened upstream', async () => {
    const hung = await startHungServer();
    cleanups.push(() => hung.close());
    const proxy = await startEgressProxy([`127.0.0.1:${hung.port}`]);
    cleanups.push(() => proxy.close());
    const client = request({
      host: '127.0.0.1',
      port: proxy.port,
      method: 'CONNECT',
      path: `127.0.0.1:${hung.port}`,
      headers: { 'proxy-authorization': authOf(proxy) },
    });
    const [res, socket] = (await once(client.end(), 'connect')) as [{ statusCode: number }, Socket];
    expect(res.statusCode).toBe(200);
    socket.write('POST /v1/responses HTTP/1.1\r\nhost: model\r\ncontent-length: 2\r\n\r\n{}');
    await until(() => hung.open() === 1, 'the tunnel reached the hung server');
    socket.destroy();
    await until(() => hung.open() === 0, 'the upstream connection ended');
    await until(() => proxy.openConnections() === 0, 'the proxy holds no connection');
  });

  it('ends what is still open when it is closed', async () => {
    const hung = await startHungServer();
    cleanups.push(() => hung.close());
    const proxy = await startEgressProxy([`127.0.0.1:${hung.port}`]);
    const client = request({
      host: '127.0.0.1',
      port: proxy.port,
      method: 'GET',
      path: `http://127.0.0.1:${hung.port}/`,
      headers: { 'proxy-authorization': authOf(proxy) },
    });
    client.on('error', () => undefined);
    client.end();
    await until(() => hung.open() === 1, 'the request reached the hung server');
    await proxy.close();
    await until(() => hung.open() === 0, 'the upstream connection ended');
    client.destroy();
  });
});

/**
 * The agent: a plain HTTP request and a CONNECT tunnel through its proxy to two model servers
 * that never answer, then it waits for them; agent.timeoutSec kills it in the middle of both.
 */
const HANGING_AGENT = `
const http = require('node:http');
const proxy = new URL(process.env.HTTP_PROXY);
const auth = 'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64');
const plain = http.request({ host: proxy.hostname, port: proxy.port, method: 'POST', path: 'http://127.0.0.1:' + process.env.PLAIN_PORT + '/v1/messages', headers: { 'proxy-authorization': auth } });
plain.on('error', () => undefined);
plain.write('{"stream":true}');
const tunnel = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: '127.0.0.1:' + process.env.TUNNEL_PORT, headers: { 'proxy-authorization': auth } });
tunnel.on('connect', (res, socket) => { socket.write('POST /v1/responses HTTP/1.1\\r\\nhost: m\\r\\ncontent-length: 2\\r\\n\\r\\n{}'); console.log('both-sent'); });
tunnel.end();
setInterval(() => undefined, 1000);
`;

async function hangingWorld(plain: HungServer, tunnel: HungServer) {
  const manifest = baseManifest({
    tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    parallelism: 1,
    retry: { maxAttempts: 1 },
    agent: {
      kind: 'command',
      command: ['node', '-e', HANGING_AGENT],
      env: ['PLAIN_PORT', 'TUNNEL_PORT'],
      timeoutSec: 3,
      network: { allow: [`127.0.0.1:${plain.port}`, `127.0.0.1:${tunnel.port}`] },
    },
  });
  process.env.PLAIN_PORT = String(plain.port);
  process.env.TUNNEL_PORT = String(tunnel.port);
  return makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
}

describe('a run whose agent is killed in the middle of requests to a model that never answers', () => {
  itWith('bwrap')('leaves no connection open to the model once the episode is recorded', async () => {
    const plain = await startHungServer();
    const tunnel = await startHungServer();
    cleanups.push(
      () => plain.close(),
      () => tunnel.close(),
    );
    const f = await hangingWorld(plain, tunnel);
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('blocked');
    expect([plain.taken(), tunnel.taken()]).toEqual([1, 1]);
    await until(() => plain.open() + tunnel.open() === 0, 'both upstream connections ended');
  });

  itWith('bwrap')(
    'genesis run prints its summary and exits',
    async () => {
      const plain = await startHungServer();
      const tunnel = await startHungServer();
      cleanups.push(
        () => plain.close(),
        () => tunnel.close(),
      );
      const f = await hangingWorld(plain, tunnel);
      const cli = startCli(['run', '--world', f.world.path], { PLAIN_PORT: String(plain.port), TUNNEL_PORT: String(tunnel.port) });
      const exited = await Promise.race([cli.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 90_000))]);
      expect(exited, `${cli.lines.join('\n')}\n${cli.stderr()}`).toBe(3);
      expect([plain.taken(), tunnel.taken()]).toEqual([1, 1]);
      // Before any episode, the run said where its agent may connect: the two endpoints of its allow-list and nothing else.
      const reach = cli.lines.find((l) => l.startsWith('agent network:'));
      expect(reach).toContain(`through a proxy 127.0.0.1:${plain.port}, 127.0.0.1:${tunnel.port}`);
      expect(reach).toMatch(/; nothing else$/);
    },
    120_000,
  );
});
