import { execFileSync, spawn } from 'node:child_process';
import { mkdir, readdir, readlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { findEgressTools, findNetnsTools, hostNetworks, type NetnsTools } from '../../../src/sandbox/netns/network-namespace.js';
import { removeStaleAgentNetns } from '../../../src/sandbox/netns/leftovers.js';
import { AgentNetnsPool } from '../../../src/sandbox/netns/pool.js';
import { BwrapAgentSandbox } from '../../../src/sandbox/agent/bwrap-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { startOutsideServer } from '../../helpers/outside-server.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { hostAddresses } from '../../helpers/host-addresses.js';
import { logFacts } from '../../helpers/log-facts.js';

/**
 * Agents whose network namespaces come ready-made from a pool (root only: the pool's namespaces
 * carry the packet filter). Each must be as confined as one made at launch, see nothing of the
 * agent before it, and leave nothing behind, even when Genesis is killed.
 */

/** Prints `name=value` facts about what the agent reaches; the addresses come in the environment. */
const NET_PROBE = `
const net = require('node:net');
const say = (k, v) => console.log(k + '=' + v);
const connect = (host, port) => new Promise((done) => {
  const s = net.connect(port, host); s.setTimeout(3000, () => { s.destroy(); done('timeout'); });
  s.on('connect', () => { s.destroy(); done('connected'); }); s.on('error', (e) => done(e.code));
});
const get = (url) => fetch(url).then((r) => r.text(), () => 'unreachable');
(async () => {
  if (process.env.OUTSIDE_URL) say('outside', await get(process.env.OUTSIDE_URL));
  say('host-loopback', await get(process.env.HOST_LOOPBACK_URL));
  for (const a of process.env.HOST_ADDRS.split(',')) say('redis@' + a, await connect(a, 6379));
})();
`;

/** The first agent: leaves a file in /tmp, a listener and a sleeper behind, and traffic on loopback. */
const FIRST = `
echo "ns=$(readlink /proc/self/ns/net)"
echo "ipc=$(readlink /proc/self/ns/ipc)"
echo "uts=$(readlink /proc/self/ns/uts)"
echo "hostname=$(hostname)"
ipcmk -M 4096 >/dev/null && echo "shm=$(ipcs -m | grep -c '^0x')"
echo left > /tmp/left-by-first
setsid node -e "require('net').createServer().listen(7777, '127.0.0.1')" left-by-first </dev/null >/dev/null 2>&1 &
setsid sh -c 'exec sleep 300' left-by-first </dev/null >/dev/null 2>&1 &
sleep 0.5
node -e "const s=require('net').connect(7777,'127.0.0.1');s.on('connect',()=>{console.log('own-listener=connected');s.end()});s.on('error',e=>console.log('own-listener='+e.code))"
echo "lo-rx=$(awk '$1=="lo:"{print $2}' /proc/net/dev)"
`;

/** The second agent: reports what of the first it finds. */
const SECOND = `
echo "ns=$(readlink /proc/self/ns/net)"
echo "ipc=$(readlink /proc/self/ns/ipc)"
echo "uts=$(readlink /proc/self/ns/uts)"
echo "hostname=$(hostname)"
echo "shm=$(ipcs -m | grep -c '^0x')"
echo "lo-rx=$(awk '$1=="lo:"{print $2}' /proc/net/dev)"
test -e /tmp/left-by-"first" && echo tmp-file=visible || echo tmp-file=hidden
# The pattern does not match itself: no process of this agent counts.
echo "processes=$(for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep -c 'left-by-firs[t]')"
node -e "const s=require('net').connect(7777,'127.0.0.1');s.on('connect',()=>{console.log('listener=connected');s.end()});s.on('error',e=>console.log('listener='+e.code))"
`;

async function realTools(): Promise<Required<NetnsTools>> {
  return { ...(await findNetnsTools()), ...(await findEgressTools()) };
}

async function agentRun(name: string, env: Record<string, string> = {}): Promise<AgentRunInput> {
  const root = await tempDir(`genesis-agent-pool-${name}-`);
  const workspace = join(root, 'ws');
  await mkdir(join(root, 'home'), { recursive: true });
  await mkdir(workspace);
  await writeFile(join(workspace, 'probe.js'), NET_PROBE);
  const promptFile = join(root, 'prompt.md');
  await writeFile(promptFile, 'probe\n');
  return {
    workspace,
    promptFile,
    prompt: 'probe\n',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(root, 'home'), ...env },
    timeoutMs: 60_000,
    taskId: name,
    attempt: 1,
  };
}

/** Host processes whose network namespace is `ns` (`net:[inode]`). */
async function processesIn(ns: string): Promise<string[]> {
  const pids: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (/^\d+$/.test(pid) && (await readlink(`/proc/${pid}/ns/net`).catch(() => '')) === ns) pids.push(pid);
  }
  return pids;
}

let hostServer: Server;
let hostPort: number;
beforeAll(async () => {
  hostServer = createServer((_req, res) => res.end('host'));
  await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
  hostPort = (hostServer.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => hostServer.close(() => resolve())));

const asRoot = process.getuid?.() === 0;

/**
 * Fills `pool` for this host's networks now and runs `work`; says whether the networks moved
 * meanwhile. Other tests add and remove Docker networks at any time, and a namespace made before
 * a network was added is rightly not handed out: such a take misses, and only such a take may.
 */
async function withFilledPool<T>(pool: AgentNetnsPool, work: () => Promise<T>): Promise<{ value: T; moved: boolean }> {
  const before = hostNetworks().sort().join(',');
  await pool.fill(hostNetworks());
  const value = await work();
  return { value, moved: hostNetworks().sort().join(',') !== before };
}

/** Every take of `runs` was served by the pool, but for those whose host networks moved meanwhile. */
function expectServedFromPool(pool: AgentNetnsPool, runs: Array<{ moved: boolean }>): void {
  expect(pool.stats.hits + pool.stats.misses).toBe(runs.length);
  expect(pool.stats.misses, "a miss while this host's networks stayed as they were").toBeLessThanOrEqual(runs.filter((r) => r.moved).length);
}

describe.runIf(asRoot)('an agent whose network namespace comes from the pool', () => {
  itWith('bwrap')("reaches the outside, and neither this host's loopback, nor its addresses, nor Redis", async () => {
    const pool = new AgentNetnsPool({ size: 1 });
    const outside = await startOutsideServer('answers');
    try {
      const sandbox = new BwrapAgentSandbox(undefined, pool);
      await sandbox.check();
      // Read once: a bridge another test creates meanwhile would add an address the probe never tried.
      const addresses = hostAddresses();
      const probe = await withFilledPool(pool, async () => {
        expect(pool.readyCount).toBe(1);
        const run = await agentRun('probe', {
          OUTSIDE_URL: outside.url,
          HOST_LOOPBACK_URL: `http://127.0.0.1:${hostPort}/`,
          HOST_ADDRS: addresses.join(','),
        });
        return new CommandAgent(['node', 'probe.js'], { sandbox }).run(run);
      });
      const result = probe.value;
      expect(result.exitCode, result.log).toBe(0);
      expectServedFromPool(pool, [probe]);
      const seen = logFacts(result.log);
      expect(seen.outside).toBe('answers');
      expect(seen['host-loopback']).toBe('unreachable');
      for (const address of addresses) {
        expect(seen[`redis@${address}`], `redis through ${address}`).toMatch(/^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timeout)$/);
      }
    } finally {
      await outside.close();
      await pool.drain();
    }
  });

  itWith('bwrap')('sees nothing the agent before it left: no file, no process, no listener, no IPC object, namespaces of its own', async () => {
    const pool = new AgentNetnsPool({ size: 1 });
    try {
      const sandbox = new BwrapAgentSandbox(undefined, pool);
      await sandbox.check();
      const firstRun = await withFilledPool(pool, async () => new CommandAgent(['sh', '-c', FIRST], { sandbox }).run(await agentRun('first')));
      const secondRun = await withFilledPool(pool, async () => new CommandAgent(['sh', '-c', SECOND], { sandbox }).run(await agentRun('second')));
      expectServedFromPool(pool, [firstRun, secondRun]);
      const first = logFacts(firstRun.value.log);
      const second = logFacts(secondRun.value.log);
      // The first agent's own world worked: its listener answered on its loopback.
      expect(first['own-listener']).toBe('connected');
      expect(Number(first['lo-rx'])).toBeGreaterThan(0);
      // Namespaces of their own, not the host's. The first agent's and the second's are not
      // compared by number: the first is gone before the second is made, and the kernel hands a
      // freed namespace's number out again (seen in CI: the same ipc number twice). That the
      // second is fresh is what it sees below: no traffic, listener, process, file or IPC object.
      for (const kind of ['net', 'ipc', 'uts'] as const) {
        const host = await readlink(`/proc/self/ns/${kind}`);
        const [mine, next] = kind === 'net' ? [first.ns, second.ns] : [first[kind], second[kind]];
        expect(mine, kind).toMatch(new RegExp(`^${kind}:\\[\\d+\\]$`));
        expect(next, kind).toMatch(new RegExp(`^${kind}:\\[\\d+\\]$`));
        expect([mine, next], kind).not.toContain(host);
      }
      expect(first).toMatchObject({ hostname: 'agent', shm: '1' });
      expect(second).toMatchObject({ 'lo-rx': '0', 'tmp-file': 'hidden', processes: '0', listener: 'ECONNREFUSED', hostname: 'agent', shm: '0' });
      await pool.drain();
      // Closed with their agents: nothing on this host is in either namespace any more (the
      // first agent's daemons die with its PID namespace, which the kernel empties a moment later).
      for (let i = 0; i < 50 && (await processesIn(first.ns!)).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await processesIn(first.ns!)).toEqual([]);
      expect(await processesIn(second.ns!)).toEqual([]);
    } finally {
      await pool.drain();
    }
  });
});

describe.runIf(asRoot)('a launch from the pool', () => {
  itWith('bwrap')('gives its namespace back once when disposed twice, and the drain keeps the resolver file until it is', async () => {
    const pool = new AgentNetnsPool({ size: 1, tools: await realTools() });
    try {
      const sandbox = new BwrapAgentSandbox(undefined, pool);
      await sandbox.check();
      const run = await agentRun('twice');
      const taken = await withFilledPool(pool, () =>
        sandbox.launch(['true'], { workspace: run.workspace, home: run.env.HOME!, env: run.env, readOnly: [], name: 'twice' }),
      );
      const launch = taken.value;
      expectServedFromPool(pool, [taken]);
      const resolver = await pool.resolvConf();
      await pool.drain();
      // Taken and not given back: its agent may still bind the resolver file.
      expect(execFileSync('cat', [resolver], { encoding: 'utf8' })).toBe('nameserver 10.0.2.3\n');
      await launch.dispose();
      await launch.dispose();
      await pool.drain();
      expect(pool.stats.closed).toBe(pool.stats.made);
      expect(pool.readyCount).toBe(0);
    } finally {
      await pool.drain();
    }
  });
});

describe.runIf(asRoot)("when this host's networks change", () => {
  /** The OUTPUT rules of a namespace's filter, read from inside it. */
  function outputRules(enter: string[]): string {
    const [file, ...args] = enter;
    return execFileSync(file!, args, { encoding: 'utf8' });
  }

  itWith('bwrap')('a namespace made before a network was added is not handed out; one made before a network went away is', async () => {
    const pool = new AgentNetnsPool({ size: 1, tools: await realTools() });
    try {
      const now = hostNetworks();
      await pool.fill(now);
      const added = [...now, '203.0.113.0/24'];
      // The ready one does not reject the new network: it is closed, and this launch makes its own.
      expect(await pool.take(added)).toBeNull();
      expect(pool.stats).toMatchObject({ hits: 0, misses: 1, made: 1 });
      await pool.fill(added);
      const slot = await pool.take(added);
      expect(slot).not.toBeNull();
      expect(outputRules(slot!.enter(['iptables', '-S', 'OUTPUT']))).toContain('-A OUTPUT -d 203.0.113.0/24 -j REJECT');
      expect(pool.stats.made).toBe(2);
      pool.release(slot!);
      await pool.fill(added);
      const fewer = await pool.take(now);
      expect(fewer).not.toBeNull();
      expect(pool.stats.made).toBe(3);
      expect(outputRules(fewer!.enter(['iptables', '-S', 'OUTPUT']))).toContain('-A OUTPUT -d 203.0.113.0/24 -j REJECT');
      pool.release(fewer!);
    } finally {
      await pool.drain();
    }
  });
});

/** Runs the fixture that fills the process's shared pool; resolves once it printed what it holds. */
function child(mode: 'end' | 'wait'): Promise<{ pid: number; dir: string; pids: number[]; exited: Promise<number | null> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/sandbox/netns-pool-child.ts', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+) (\S+)((?: \d+)*)\n/.exec(out);
      if (match) resolve({ pid: Number(match[1]), dir: match[2]!, pids: match[3]!.trim().split(' ').filter(Boolean).map(Number), exited });
    });
    proc.once('exit', (code) => reject(new Error(`the child exited (${code}) before it was ready: ${out}`)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function leftDirs(pid: number): string {
  return execFileSync('sh', ['-c', `ls -d ${tmpdir()}/genesis-agent-netns-${pid}-* 2>/dev/null || true`], { encoding: 'utf8' });
}

describe.runIf(asRoot)('an agent namespace pool leaves nothing behind', () => {
  itWith('bwrap')('after a process that filled it ends normally: no process, no directory', async () => {
    const run = await child('end');
    expect(run.pids.length).toBe(4);
    expect(await run.exited).toBe(0);
    for (const pid of run.pids) expect(alive(pid), `process ${pid}`).toBe(false);
    expect(leftDirs(run.pid)).toBe('');
  });

  itWith('bwrap')('after a process that filled it is killed: its processes end, and the next pool to start removes its directory', async () => {
    const run = await child('wait');
    expect(run.dir).toMatch(/^genesis-agent-netns-/);
    expect(run.pids.length).toBe(4);
    for (const pid of run.pids) expect(alive(pid), `process ${pid}`).toBe(true);
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    expect(leftDirs(run.pid)).not.toBe('');
    await removeStaleAgentNetns();
    expect(leftDirs(run.pid)).toBe('');
    // Each ends when the pipe from its maker closes; the clean-up kills any that did not.
    for (let i = 0; i < 50 && run.pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    for (const pid of run.pids) expect(alive(pid), `process ${pid}`).toBe(false);
  });

  itWith('bwrap')("kills a pooled namespace's processes whose maker is gone", async () => {
    const run = await child('wait');
    // Stopped, the holders and slirp4netns cannot notice their maker's end by themselves.
    for (const pid of run.pids) process.kill(pid, 'SIGSTOP');
    process.kill(run.pid, 'SIGKILL');
    await run.exited;
    expect(await removeStaleAgentNetns()).toBeGreaterThanOrEqual(4);
    for (let i = 0; i < 50 && run.pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    for (const pid of run.pids) expect(alive(pid), `process ${pid}`).toBe(false);
  });
});

describe.runIf(asRoot)('when namespaces cannot be made ahead', () => {
  const broken: Array<[string, (tools: Required<NetnsTools>) => Required<NetnsTools>]> = [
    ['slirp4netns is missing', (tools) => ({ ...tools, slirp4netns: '/nonexistent/slirp4netns' })],
    ['a namespace cannot be made', (tools) => ({ ...tools, unshare: '/bin/false' })],
    ['the filter cannot be set', (tools) => ({ ...tools, iptablesRestore: '/bin/false' })],
  ];
  for (const [what, breakTools] of broken) {
    itWith('bwrap')(`(${what}) each agent gets one made at its launch, as confined, and the pool turns itself off`, async () => {
      const pool = new AgentNetnsPool({ size: 1, tools: breakTools(await realTools()) });
      const sandbox = new BwrapAgentSandbox(undefined, pool);
      await sandbox.check();
      for (let i = 0; i < 3; i++) {
        const run = await agentRun(`fallback-${i}`, { HOST_LOOPBACK_URL: `http://127.0.0.1:${hostPort}/`, HOST_ADDRS: '127.0.0.1' });
        const result = await new CommandAgent(['node', 'probe.js'], { sandbox }).run(run);
        expect(result.exitCode, result.log).toBe(0);
        expect(logFacts(result.log)).toMatchObject({ 'host-loopback': 'unreachable', 'redis@127.0.0.1': 'ECONNREFUSED' });
      }
      expect(pool.stats.hits).toBe(0);
      expect(pool.stats.failures).toBeGreaterThanOrEqual(3);
      expect(pool.usable).toBe(false);
      expect(pool.readyCount).toBe(0);
      await pool.drain();
    });
  }
});
