import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { agentEndpoints } from '../../../src/sandbox/egress/endpoints.js';
import { createAgentSandbox, type AgentNetworkChoice } from '../../../src/sandbox/create-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startOutsideServer, type OutsideServer } from '../../helpers/outside-server.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { logFacts } from '../../helpers/log-facts.js';

/**
 * A model server on this host's loopback (what Ollama, vLLM or a gateway is), reached from the
 * default confined sandbox with only `agent.baseUrl` written, and a cheating agent that tries
 * every other way out: another loopback port (a second service, Redis), the gateway, this host's
 * own address, a raw socket, and with an allow-list, the proxy to a host or port not listed.
 * One `name=value` line per fact.
 */
const PROBE = `
const http = require('node:http');
const net = require('node:net');
const say = (k, v) => console.log(k + '=' + v);
const get = (host, port) => new Promise((done) => {
  const req = http.get({ host, port, path: '/v1/models', timeout: 5000 }, (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => done(res.statusCode + ' ' + t.trim())); });
  req.on('timeout', () => { req.destroy(); done('timeout'); });
  req.on('error', (e) => done(e.code));
});
const direct = (host, port) => new Promise((done) => {
  const s = net.connect(port, host); s.setTimeout(3000, () => { s.destroy(); done('timeout'); });
  s.on('connect', () => { s.destroy(); done('connected'); }); s.on('error', (e) => done(e.code));
});
const tunnel = (target) => new Promise((done) => {
  if (!process.env.HTTP_PROXY) return done('no-proxy');
  const proxy = new URL(process.env.HTTP_PROXY);
  const auth = 'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64');
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target, headers: { 'proxy-authorization': auth } });
  req.on('connect', (res, socket) => { socket.destroy(); done(String(res.statusCode)); });
  req.on('error', (e) => done(e.code));
  req.end();
});
(async () => {
  const e = process.env;
  say('model', await get('127.0.0.1', e.MODEL_PORT));
  say('model-localhost', await get('localhost', e.MODEL_PORT));
  say('other-loopback', await direct('127.0.0.1', e.OTHER_PORT));
  say('redis-loopback', await direct('127.0.0.1', 6379));
  say('model-gateway', await direct('10.0.2.2', e.MODEL_PORT));
  say('other-gateway', await direct('10.0.2.2', e.OTHER_PORT));
  say('redis-gateway', await direct('10.0.2.2', 6379));
  if (e.HOST_ADDRESS) say('other-host-address', await direct(e.HOST_ADDRESS, e.OTHER_PORT));
  if (e.HOST_ADDRESS) say('redis-host-address', await direct(e.HOST_ADDRESS, 6379));
  say('proxy-model', await tunnel('127.0.0.1:' + e.MODEL_PORT));
  say('proxy-other', await tunnel('127.0.0.1:' + e.OTHER_PORT));
  say('proxy-redis', await tunnel('127.0.0.1:6379'));
  say('proxy-outside-other-port', await tunnel(e.OUTSIDE + ':8080'));
  say('proxy-unlisted', await tunnel('10.213.255.254:443'));
  const raw = require('node:child_process').spawnSync('/usr/bin/python3', ['-c', 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("opened")'], { encoding: 'utf8' });
  say('raw', raw.stdout.trim() || (raw.stderr.includes('PermissionError') ? 'refused' : 'error ' + raw.status));
})();
`;

let model: Server;
let other: Server;
let outside: OutsideServer;
const served: string[] = [];
const otherServed: string[] = [];

async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  model = createServer((req, res) => {
    served.push(`${req.method} ${req.url}`);
    res.end('model-answers');
  });
  // The other service listens on every address, as a careless one would.
  other = createServer((req, res) => {
    otherServed.push(`${req.method} ${req.url}`);
    res.end('other-answers');
  });
  await listen(model, '127.0.0.1');
  await listen(other, '0.0.0.0');
  outside = await startOutsideServer('outside-answers');
});
afterAll(async () => {
  model?.close();
  other?.close();
  await outside?.close();
});

/** One of this host's own non-loopback IPv4 addresses, if it has one. */
function hostAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

async function probe(network: AgentNetworkChoice): Promise<Record<string, string>> {
  const modelPort = (model.address() as AddressInfo).port;
  const otherPort = (other.address() as AddressInfo).port;
  const endpoints = agentEndpoints({ kind: 'command', baseUrl: `http://127.0.0.1:${modelPort}` });
  const sandbox = await createAgentSandbox({ kind: 'auto', image: 'genesis/node:20', network, endpoints });
  const dir = await tempDir('genesis-model-endpoint-');
  const workspace = join(dir, 'ws');
  await mkdir(join(dir, 'home'), { recursive: true });
  execFileSync('git', ['init', '--quiet', workspace]);
  await writeFile(join(workspace, 'probe.js'), PROBE);
  const promptFile = join(dir, 'prompt.md');
  await writeFile(promptFile, 'probe\n');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    MODEL_PORT: String(modelPort),
    OTHER_PORT: String(otherPort),
    OUTSIDE: outside.host,
    GENESIS_EPISODE_ID: 'e1',
    ...(hostAddress() ? { HOST_ADDRESS: hostAddress()! } : {}),
  };
  const result = await new CommandAgent(['node', 'probe.js'], { sandbox }).run({
    workspace,
    promptFile,
    prompt: 'probe\n',
    env,
    timeoutMs: 90_000,
    taskId: 't',
    attempt: 1,
  });
  expect(result.exitCode, result.log).toBe(0);
  return logFacts(result.log);
}

const CUT = /^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|timeout)$/;

describe('an agent whose baseUrl is on this host loopback, in the default sandbox', () => {
  itWith('bwrap')('reaches that host and port, and no other port of this host', async () => {
    served.length = 0;
    otherServed.length = 0;
    const seen = await probe('genesis-agents');
    expect(seen.model).toBe('200 model-answers');
    expect(seen['model-localhost']).toBe('200 model-answers');
    const hostAddressKeys = hostAddress() ? ['other-host-address', 'redis-host-address'] : [];
    for (const key of ['other-loopback', 'redis-loopback', 'model-gateway', 'other-gateway', 'redis-gateway', ...hostAddressKeys])
      expect(seen[key], key).toMatch(CUT);
    expect(seen['proxy-model']).toBe('no-proxy');
    expect(seen.raw).toBe('refused');
    expect(served).toEqual(['GET /v1/models', 'GET /v1/models']);
    expect(otherServed).toEqual([]);
  });

  itWith('bwrap')('with an allow-list, reaches it directly and through the proxy, and the proxy refuses every other port and host', async () => {
    served.length = 0;
    otherServed.length = 0;
    const seen = await probe({ allow: [outside.host] });
    expect(seen.model).toBe('200 model-answers');
    expect(seen['proxy-model']).toBe('200');
    for (const key of ['proxy-other', 'proxy-redis', 'proxy-outside-other-port', 'proxy-unlisted']) expect(seen[key], key).toBe('403');
    for (const key of ['other-loopback', 'redis-loopback', 'other-gateway', 'redis-gateway']) expect(seen[key], key).toMatch(CUT);
    expect(seen.raw).toBe('refused');
    expect(otherServed).toEqual([]);
  });
});

describe('an agent whose model endpoint does not accept connections', () => {
  itWith('bwrap')('makes the world wait for its model, uncharged and said, long before agent.timeoutSec', async () => {
    // A port nothing listens on: taken, then given back.
    const closed = createServer();
    const port = await listen(closed, '127.0.0.1');
    await new Promise((resolve) => closed.close(resolve));
    const standins = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'bin');
    const manifest = baseManifest({
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
      parallelism: 1,
      agent: { kind: 'command', preset: 'claude-code', baseUrl: `http://127.0.0.1:${port}`, timeoutSec: 600 },
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
    const path = process.env.PATH;
    process.env.PATH = `${standins}:${path}`;
    // A local model server restarted overnight must not end the run: it waits (stopped here at its first wait).
    const stop = new AbortController();
    const holds: string[] = [];
    try {
      const started = Date.now();
      const summary = await runEmbedded({
        world: f.world,
        sandbox: f.sandbox,
        signal: stop.signal,
        onEvent: (e) => {
          if (e.type !== 'hold') return;
          holds.push(e.message);
          stop.abort();
        },
      });
      expect(Date.now() - started).toBeLessThan(120_000);
      expect(summary.stop.kind).toBe('interrupted');
      expect(holds[0]).toMatch(new RegExp(`http://127.0.0.1:${port} does not accept connections \\(ECONNREFUSED\\); the world waits \\d+ s for it`));
      expect((await new GitLedger(f.world.path).readAll()).map((e) => [e.outcome, e.reason])).toEqual([['abandoned', 'model-unreachable']]);
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('an agent whose model server goes away during the episode', () => {
  itWith('bwrap')('is stopped with agent-unreachable-model soon after, not at its timeout', async () => {
    const going = createServer((_req, res) => res.end('first-answer'));
    const port = await listen(going, '127.0.0.1');
    const endpoints = agentEndpoints({ kind: 'command', baseUrl: `http://127.0.0.1:${port}` });
    const sandbox = await createAgentSandbox({ kind: 'auto', image: 'genesis/node:20', network: 'genesis-agents', endpoints });
    const dir = await tempDir('genesis-model-gone-');
    const workspace = join(dir, 'ws');
    execFileSync('git', ['init', '--quiet', workspace]);
    const promptFile = join(dir, 'prompt.md');
    await writeFile(promptFile, 'retry forever\n');
    // A CLI that retries its model forever, as Claude Code and opencode do.
    const retrying = `const http = require('node:http');
const ask = () => http.get({ host: '127.0.0.1', port: ${port}, path: '/' }, (res) => { res.resume(); console.log('answer ' + res.statusCode); setTimeout(ask, 200); }).on('error', (e) => { console.log('error ' + e.code); setTimeout(ask, 200); });
ask();`;
    const agent = new CommandAgent(['node', '-e', retrying], { sandbox, endpoints });
    const started = Date.now();
    const running = agent.run({
      workspace,
      promptFile,
      prompt: '',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GENESIS_EPISODE_ID: 'e1' },
      timeoutMs: 300_000,
      taskId: 't',
      attempt: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    going.closeAllConnections();
    await new Promise((resolve) => going.close(resolve));
    const error = await running.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-unreachable-model', message: expect.stringContaining(`127.0.0.1:${port} (ECONNREFUSED)`) });
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});

describe('agent.network: host', () => {
  itWith('docker')('is refused for a docker agent as written, and given only as acknowledged', async () => {
    const refused = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'host' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'agent-sandbox-unavailable', message: expect.stringContaining('agent.network: host') });
    const sandbox = await createAgentSandbox({
      kind: 'docker',
      image: 'genesis/node:20',
      network: { mode: 'host', acknowledge: 'a test of the host network' },
    });
    const dir = await tempDir('genesis-host-network-');
    const workspace = join(dir, 'ws');
    execFileSync('git', ['init', '--quiet', workspace]);
    const promptFile = join(dir, 'prompt.md');
    await writeFile(promptFile, 'x\n');
    const otherPort = (other.address() as AddressInfo).port;
    // On the host network, this host's loopback services are in reach: what the acknowledgement is for.
    const script = `require('node:http').get('http://127.0.0.1:${otherPort}/', (r) => { let t = ''; r.on('data', (c) => (t += c)); r.on('end', () => console.log('got ' + t)); }).on('error', (e) => console.log('error ' + e.code))`;
    const result = await new CommandAgent(['node', '-e', script], { sandbox }).run({
      workspace,
      promptFile,
      prompt: '',
      env: { GENESIS_EPISODE_ID: 'e1' },
      timeoutMs: 120_000,
      taskId: 't',
      attempt: 1,
    });
    expect(result.log).toContain('got other-answers');
  });
});

describe("an agent whose baseUrl is one of this host's own addresses", () => {
  const address = hostAddress();
  itWith('bwrap')('reaches that address on that port only, through the packet filter', async () => {
    expect(address, 'this host has no address besides its loopback').toBeDefined();
    const onHost = createServer((_req, res) => res.end('host-model-answers'));
    const port = await listen(onHost, address!);
    const otherPort = (other.address() as AddressInfo).port;
    try {
      const endpoints = agentEndpoints({ kind: 'command', baseUrl: `http://${address}:${port}/v1` });
      const sandbox = await createAgentSandbox({ kind: 'auto', image: 'genesis/node:20', network: 'genesis-agents', endpoints });
      const dir = await tempDir('genesis-model-host-address-');
      const workspace = join(dir, 'ws');
      execFileSync('git', ['init', '--quiet', workspace]);
      const promptFile = join(dir, 'prompt.md');
      await writeFile(promptFile, 'x\n');
      const script = `const http = require('node:http'); const net = require('node:net');
const get = (port) => new Promise((done) => http.get({ host: '${address}', port, path: '/', timeout: 5000 }, (r) => { let t = ''; r.on('data', (c) => (t += c)); r.on('end', () => done(t)); }).on('error', (e) => done(e.code)).on('timeout', function () { this.destroy(); done('timeout'); }));
(async () => { console.log('model=' + await get(${port})); console.log('other=' + await get(${otherPort})); console.log('redis=' + await get(6379)); })();`;
      const result = await new CommandAgent(['node', '-e', script], { sandbox, endpoints }).run({
        workspace,
        promptFile,
        prompt: '',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GENESIS_EPISODE_ID: 'e1' },
        timeoutMs: 60_000,
        taskId: 't',
        attempt: 1,
      });
      const seen = logFacts(result.log);
      expect(seen.model, result.log).toBe('host-model-answers');
      expect(seen.other).toMatch(CUT);
      expect(seen.redis).toMatch(CUT);
    } finally {
      onHost.close();
    }
  });
});
