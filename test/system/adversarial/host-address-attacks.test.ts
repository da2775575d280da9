import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { hostNetworks } from '../../../src/sandbox/netns/network-namespace.js';
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
});
