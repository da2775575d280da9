import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Finds every process an unsandboxed agent started, including daemons that left its process
 * group with setsid, so none outlives the episode. Where Genesis may create cgroups (root, with a
 * pids or cgroup2 hierarchy) the agent starts inside a cgroup of its own, which no descendant can
 * leave; elsewhere its descendants are found by a marker variable in their environment (which a
 * deliberate evader could clear; run such agents in an agent sandbox).
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
  if (process.getuid?.() === 0) {
    for (const root of HIERARCHIES) {
      const dir = join(root, `genesis-agent-${token}`);
      if (await mkdir(dir).then(() => true, () => false)) return cgroupTracker(dir, env);
    }
  }
  return environTracker(token, env);
}

function cgroupTracker(dir: string, env: Record<string, string>): ProcessTracker {
  const procs = join(dir, 'cgroup.procs');
  const members = async () => (await readFile(procs, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
  return {
    env,
    // The shell joins the cgroup, then becomes the agent: nothing runs before it is tracked.
    wrap: (argv) => ['/bin/sh', '-c', `echo $$ > '${procs}' && exec "$@"`, 'genesis-agent', ...argv],
    killAll: () => killUntilEmpty(members),
    async dispose() {
      await killUntilEmpty(members);
      await rmdir(dir).catch(() => undefined);
    },
  };
}

function environTracker(token: string, env: Record<string, string>): ProcessTracker {
  const marker = Buffer.from(`GENESIS_AGENT_RUN=${token}\0`);
  const members = async () => {
    const found: number[] = [];
    for (const name of await readdir('/proc').catch(() => [] as string[])) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      const environ = await readFile(`/proc/${name}/environ`).catch(() => null);
      if (environ?.includes(marker)) found.push(Number(name));
    }
    return found;
  };
  return { env, wrap: (argv) => [...argv], killAll: () => killUntilEmpty(members), dispose: () => killUntilEmpty(members) };
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
