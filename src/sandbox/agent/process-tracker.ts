import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { guardedArgv, setprivHasPdeathsig } from './orphan-guard.js';
import { forgetAgent, readOrphanedAgents, registerAgent } from './launch-registry.js';

/**
 * Finds every process an unsandboxed agent started, including daemons that left its process
 * group with setsid, so none outlives the episode. Where Genesis may create cgroups (root, with a
 * pids or cgroup2 hierarchy) the agent starts inside a cgroup of its own, which no descendant can
 * leave; elsewhere its descendants are found by a marker variable in their environment (which a
 * deliberate evader could clear; run such agents in an agent sandbox).
 *
 * Nor does any outlive Genesis itself: the agent starts under a guard that dies with its parent
 * and takes the agent's processes with it (see agent-orphan-guard.ts), and each launch is written
 * in a registry that the next start reads to kill whatever is left (`killOrphanedAgents`).
 */
export interface ProcessTracker {
  /** The argv to run instead of `argv`, so the agent starts already tracked. */
  wrap(argv: readonly string[]): string[];
  /** Variables to add to the agent's environment. */
  readonly env: Record<string, string>;
  /** Kills every tracked process, repeating until none is left. */
  killAll(): Promise<void>;
  dispose(): Promise<void>;
}

const HIERARCHIES = ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/unified', '/sys/fs/cgroup'];

export async function createProcessTracker(): Promise<ProcessTracker> {
  const token = randomBytes(8).toString('hex');
  const env = { GENESIS_AGENT_RUN: token };
  const pdeathsig = await setprivHasPdeathsig();
  let cgroup: string | null = null;
  if (process.getuid?.() === 0) {
    for (const root of HIERARCHIES) {
      const dir = join(root, `genesis-agent-${token}`);
      if (
        await mkdir(dir).then(
          () => true,
          () => false,
        )
      ) {
        cgroup = dir;
        break;
      }
    }
  }
  const unregister = await registerAgent({ token, cgroup });
  const members = async () => [...new Set([...(cgroup ? await cgroupMembers(cgroup) : []), ...(await markedProcesses(token))])];
  return {
    env,
    wrap: (argv) => guardedArgv(argv, cgroup ? join(cgroup, 'cgroup.procs') : null, pdeathsig),
    killAll: () => killUntilEmpty(members),
    async dispose() {
      await killUntilEmpty(members);
      if (cgroup) await rmdir(cgroup).catch(() => undefined);
      await unregister();
    },
  };
}

/**
 * Kills every process of agents whose Genesis died without cleaning up (a `kill -9`, a power
 * cut on a machine that kept /tmp), and forgets them. Returns how many processes were killed.
 */
export async function killOrphanedAgents(): Promise<number> {
  let killed = 0;
  for (const entry of await readOrphanedAgents()) {
    const members = async () => [...new Set([...(entry.cgroup ? await cgroupMembers(entry.cgroup) : []), ...(await markedProcesses(entry.token))])];
    killed += (await members()).length;
    await killUntilEmpty(members);
    await forgetAgent(entry);
  }
  return killed;
}

async function cgroupMembers(dir: string): Promise<number[]> {
  return (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
}

async function markedProcesses(token: string): Promise<number[]> {
  const marker = Buffer.from(`GENESIS_AGENT_RUN=${token}\0`);
  const found: number[] = [];
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const environ = await readFile(`/proc/${name}/environ`).catch(() => null);
    if (environ?.includes(marker)) found.push(Number(name));
  }
  return found;
}

async function killUntilEmpty(members: () => Promise<number[]>): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const pids = await members();
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await sleep(25);
  }
}
