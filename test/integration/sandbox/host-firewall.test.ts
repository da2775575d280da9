import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

/**
 * As root, a confined agent's packet filter is restored inside its own network namespace. Pointed
 * at the wrong namespace (the agent's launcher racing its own unshare), the same restore replaces
 * this host's firewall: Docker's bridge then stops forwarding and every container loses the
 * network. Many agents launched at once must leave the host's filter exactly as it was.
 */
function hostFilter(): string {
  const rules = (chain: string) => execFileSync('iptables', ['-S', chain], { encoding: 'utf8' });
  const policies = execFileSync('iptables', ['-S'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('-P '))
    .join('\n');
  return `${policies}\n${rules('INPUT')}${rules('OUTPUT')}`;
}

/** The host filter without the guard of this host's addresses, the one rule Genesis adds to it (host-address-guard.ts). */
function hostFilterButGuard(): string {
  return hostFilter()
    .split('\n')
    .filter((line) => !line.includes('GENESIS-AGENT-NET'))
    .join('\n');
}

async function workspace(root: string, name: string) {
  const ws = join(root, name);
  await mkdir(join(ws, 'home'), { recursive: true });
  const promptFile = join(ws, 'prompt.md');
  await writeFile(promptFile, 'nothing\n');
  return {
    workspace: ws,
    promptFile,
    prompt: 'nothing\n',
    env: { PATH: '/usr/bin:/bin', HOME: join(ws, 'home') },
    timeoutMs: 60_000,
    taskId: name,
    attempt: 1,
  };
}

const asRoot = process.getuid?.() === 0;

describe.runIf(asRoot)("this host's own packet filter", () => {
  itWith('bwrap')('is left as it was by eight confined agents started at once', async () => {
    const before = hostFilterButGuard();
    const root = await tempDir('genesis-host-firewall-');
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const runs = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => new CommandAgent(['sh', '-c', 'cat /proc/net/dev | wc -l'], { sandbox }).run(await workspace(root, `a${i}`))),
    );
    for (const run of runs) expect(run.exitCode, run.log).toBe(0);
    expect(hostFilterButGuard()).toBe(before);
    // The guard's jump is there once, however many agents were launched.
    expect(hostFilter().match(/-A OUTPUT -m cgroup --path "[^"]*genesis-agent-net" -j GENESIS-AGENT-NET/g)).toHaveLength(1);
  });
});
