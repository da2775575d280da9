import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server } from 'node:net';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { hostAddressGuard } from '../../../src/sandbox/netns/host-address-guard.js';
import { findEgressTools, hostNetworks } from '../../../src/sandbox/netns/network-namespace.js';
import { startOutsideServer } from '../../helpers/outside-server.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

/**
 * The cheating agent: it waits until this host has gained an address after the agent's launch (a
 * veth the test makes, with a server listening on it, standing in for a new Docker network or a VPN
 * coming up), then connects to that server and to a host outside. A filter made of the host's
 * addresses at launch lets the first connection through; the guard must refuse it.
 */
const AGENT = `
const fs = require('node:fs');
const net = require('node:net');
fs.writeFileSync('started', '');
const until = Date.now() + 30000;
const wait = () => { while (!fs.existsSync('targets') && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); };
wait();
const targets = JSON.parse(fs.readFileSync('targets', 'utf8'));
const results = {};
let left = targets.length;
for (const t of targets) {
  const socket = net.connect({ host: t.host, port: t.port });
  const done = (what) => { if (results[t.name]) return; results[t.name] = what; socket.destroy(); if (--left === 0) { fs.writeFileSync('results', JSON.stringify(results)); process.exit(0); } };
  socket.setTimeout(5000, () => done('timeout'));
  socket.on('connect', () => done('reached'));
  socket.on('error', (e) => done(e.code));
}
`;

const asRoot = process.getuid?.() === 0;

/** A veth pair whose near end gives this host a new address, removed by `remove`. */
function addHostAddress(): { address: string; remove(): void } {
  const id = randomBytes(3).toString('hex');
  const [near, far] = [`gga${id}`, `ggb${id}`];
  const address = `10.214.${randomInt(0, 256)}.${randomInt(0, 64) * 4 + 1}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('link', 'add', near, 'type', 'veth', 'peer', 'name', far);
  const remove = () => execFileSync('ip', ['link', 'del', near], { stdio: 'ignore' });
  try {
    ip('addr', 'add', `${address}/30`, 'dev', near);
    ip('link', 'set', near, 'up');
    ip('link', 'set', far, 'up');
  } catch (error) {
    remove();
    throw error;
  }
  return { address, remove };
}

/**
 * A veth pair whose near end gives this host a new IPv6 address (a ULA, usable at once: no
 * duplicate detection), removed by `remove`. A veth, not a dummy interface: this kernel has no
 * dummy driver.
 */
function addHostIpv6Address(): { address: string; remove(): void } {
  const id = randomBytes(3).toString('hex');
  const [near, far] = [`gg6a${id}`, `gg6b${id}`];
  const address = `fd42:${id.slice(0, 4)}:${randomInt(1, 0xffff).toString(16)}::1`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('link', 'add', near, 'type', 'veth', 'peer', 'name', far);
  const remove = () => execFileSync('ip', ['link', 'del', near], { stdio: 'ignore' });
  try {
    ip('-6', 'addr', 'add', `${address}/64`, 'dev', near, 'nodad');
    ip('link', 'set', near, 'up');
    ip('link', 'set', far, 'up');
  } catch (error) {
    remove();
    throw error;
  }
  return { address, remove };
}

/** A TCP server on `host` that answers and hangs up; resolves with its port. */
async function serveOn(host: string, servers: Server[]): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('host service\n');
  });
  servers.push(server);
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

/** What a connection to each target met: `reached`, or the error's code. */
const PROBE = `
const net = require('node:net');
const targets = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const results = {};
let left = targets.length;
for (const t of targets) {
  const socket = net.connect({ host: t.host, port: t.port });
  const done = (what) => { if (results[t.name]) return; results[t.name] = what; socket.destroy(); if (--left === 0) console.log(JSON.stringify(results)); };
  socket.setTimeout(5000, () => done('timeout'));
  socket.on('connect', () => done('reached'));
  socket.on('error', (e) => done(e.code));
}
`;

/** Runs PROBE against `targets`, first moved into `cgroupDir` when given, and resolves with what it met. */
async function probe(targets: { name: string; host: string; port: number }[], cgroupDir?: string): Promise<Record<string, string>> {
  const child = spawn(process.execPath, ['-e', PROBE], { stdio: ['pipe', 'pipe', 'inherit'] });
  // In its cgroup before it opens a socket: it reads its targets only once moved.
  if (cgroupDir) await writeFile(join(cgroupDir, 'cgroup.procs'), String(child.pid));
  child.stdin.end(JSON.stringify(targets));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await once(child, 'exit');
  return JSON.parse(out) as Record<string, string>;
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting for the agent');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.runIf(asRoot)("an agent's packet filter", () => {
  itWith('bwrap')('refuses an address this host gained after the agent started, and still lets the agent out', async () => {
    const root = await tempDir('genesis-host-address-guard-');
    const ws = join(root, 'ws');
    await mkdir(join(ws, 'home'), { recursive: true });
    await writeFile(join(ws, 'agent.cjs'), AGENT);
    await writeFile(join(ws, 'prompt.md'), 'nothing\n');
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const outside = await startOutsideServer();
    let added: ReturnType<typeof addHostAddress> | null = null;
    let server: Server | null = null;
    try {
      const run = new CommandAgent(['node', 'agent.cjs'], { sandbox }).run({
        workspace: ws,
        promptFile: join(ws, 'prompt.md'),
        prompt: 'nothing\n',
        env: { PATH: '/usr/bin:/bin', HOME: join(ws, 'home') },
        timeoutMs: 60_000,
        taskId: 'guard',
        attempt: 1,
      });
      await until(
        () =>
          access(join(ws, 'started')).then(
            () => true,
            () => false,
          ),
        30_000,
      );
      added = addHostAddress();
      const fresh = added.address;
      // Now one of this host's addresses, which no filter made at the agent's launch can have listed.
      await until(async () => hostNetworks().includes(`${fresh}/32`), 5_000);
      server = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.end('host service\n');
      });
      server.listen(0, fresh);
      await once(server, 'listening');
      const port = (server.address() as { port: number }).port;
      // The service is up: this host reaches it.
      const local = connect({ host: fresh, port });
      local.on('error', () => undefined);
      await once(local, 'connect');
      local.destroy();
      // Written whole, then renamed: the agent never reads half of it.
      await writeFile(
        join(ws, 'targets.tmp'),
        JSON.stringify([
          { name: 'new-host-address', host: fresh, port },
          { name: 'outside', host: outside.host, port: outside.port },
        ]),
      );
      await rename(join(ws, 'targets.tmp'), join(ws, 'targets'));
      const result = await run;
      expect(result.exitCode, result.log).toBe(0);
      const reached = JSON.parse(await readFile(join(ws, 'results'), 'utf8')) as Record<string, string>;
      expect(reached).toEqual({ 'new-host-address': 'ECONNREFUSED', outside: 'reached' });
    } finally {
      server?.close();
      added?.remove();
      await outside.close();
    }
  });

  itWith('bwrap')("gives the agent no road to this host's IPv6 addresses, ::1 and one gained after its launch", async () => {
    const root = await tempDir('genesis-host-address-guard-');
    const ws = join(root, 'ws');
    await mkdir(join(ws, 'home'), { recursive: true });
    await writeFile(join(ws, 'agent.cjs'), AGENT);
    await writeFile(join(ws, 'prompt.md'), 'nothing\n');
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const outside = await startOutsideServer();
    const servers: Server[] = [];
    let added: ReturnType<typeof addHostIpv6Address> | null = null;
    try {
      const run = new CommandAgent(['node', 'agent.cjs'], { sandbox }).run({
        workspace: ws,
        promptFile: join(ws, 'prompt.md'),
        prompt: 'nothing\n',
        env: { PATH: '/usr/bin:/bin', HOME: join(ws, 'home') },
        timeoutMs: 60_000,
        taskId: 'guard6',
        attempt: 1,
      });
      await until(
        () =>
          access(join(ws, 'started')).then(
            () => true,
            () => false,
          ),
        30_000,
      );
      added = addHostIpv6Address();
      const loopbackPort = await serveOn('::1', servers);
      const freshPort = await serveOn(added.address, servers);
      // Both services are up: this host reaches them.
      expect(
        await probe([
          { name: 'ula', host: added.address, port: freshPort },
          { name: 'loopback', host: '::1', port: loopbackPort },
        ]),
      ).toEqual({ ula: 'reached', loopback: 'reached' });
      await writeFile(
        join(ws, 'targets.tmp'),
        JSON.stringify([
          { name: 'host-ipv6-loopback', host: '::1', port: loopbackPort },
          { name: 'new-host-ipv6-address', host: added.address, port: freshPort },
          { name: 'outside', host: outside.host, port: outside.port },
        ]),
      );
      await rename(join(ws, 'targets.tmp'), join(ws, 'targets'));
      const result = await run;
      expect(result.exitCode, result.log).toBe(0);
      const reached = JSON.parse(await readFile(join(ws, 'results'), 'utf8')) as Record<string, string>;
      // ::1 is the namespace's own loopback, where nothing listens; the namespace has no IPv6 route out (slirp4netns carries none).
      expect(reached).toEqual({ 'host-ipv6-loopback': 'ECONNREFUSED', 'new-host-ipv6-address': 'ENETUNREACH', outside: 'reached' });
    } finally {
      for (const server of servers) server.close();
      added?.remove();
      await outside.close();
    }
  });

  it("refuses, at send time, a socket of the guard's cgroup to this host's IPv6 addresses, one gained after the socket's process joined included", async () => {
    const { iptablesRestore } = await findEgressTools();
    const guard = await hostAddressGuard(iptablesRestore);
    expect(guard?.families).toEqual(['ipv4', 'ipv6']);
    // A launch's cgroup, as slirp4netns gets one: named after a private directory that lives while it does.
    const launch = await guard!.openHoles([], basename(await tempDir('genesis-guard-launch-')));
    const servers: Server[] = [];
    let added: ReturnType<typeof addHostIpv6Address> | null = null;
    try {
      const targets = async () => {
        added ??= addHostIpv6Address();
        return [
          { name: 'loopback6', host: '::1', port: await serveOn('::1', servers) },
          { name: 'new6', host: added.address, port: await serveOn(added.address, servers) },
          { name: 'loopback4', host: '127.0.0.1', port: await serveOn('127.0.0.1', servers) },
        ];
      };
      const child = spawn(process.execPath, ['-e', PROBE], { stdio: ['pipe', 'pipe', 'inherit'] });
      await writeFile(join(launch.cgroupDir, 'cgroup.procs'), String(child.pid));
      // The address comes after the process joined the guard's cgroup: only a match at send time can know it.
      const list = await targets();
      child.stdin.end(JSON.stringify(list));
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await once(child, 'exit');
      expect(JSON.parse(out)).toEqual({ loopback6: 'ECONNREFUSED', new6: 'ECONNREFUSED', loopback4: 'ECONNREFUSED' });
      // The same sockets from outside the cgroup reach all three: the guard filters nothing else on the host.
      expect(await probe(list)).toEqual({ loopback6: 'reached', new6: 'reached', loopback4: 'reached' });
    } finally {
      for (const server of servers) server.close();
      (added as ReturnType<typeof addHostIpv6Address> | null)?.remove();
      await launch.close();
    }
  });
});
