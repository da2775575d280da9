import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { execa } from 'execa';
import { isAlive } from '../../process/process-alive.js';

/**
 * Label every agent container carries with its owner, the Genesis process that made it:
 * `<hostname>/<pid namespace>/<pid>`. The namespace tells a process of this host from one with
 * the same number in a container that shares the host's name (`--uts host`).
 */
export const AGENT_OWNER_LABEL = 'genesis.agent.owner';

/** The owner label's value for containers this process makes. */
export function agentOwner(): string {
  return `${hostname()}/${pidNamespace()}/${process.pid}`;
}

function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Removes the agent containers whose owner, a process of this host (and pid namespace), is gone (killed with -9, the
 * machine's power cut): one made and never started, or one whose agent runs on with nobody to
 * read it. Containers of other hosts sharing the daemon, and of live processes, are left alone.
 * Returns how many it removed; a daemon that does not answer removes none.
 */
export async function removeOrphanedAgentContainers(env: Record<string, string>): Promise<number> {
  const docker = (args: string[]) => execa('docker', args, { reject: false, timeout: 30_000, env, extendEnv: false });
  const listed = await docker(['ps', '--all', '--filter', `label=${AGENT_OWNER_LABEL}`, '--format', `{{.ID}} {{.Label "${AGENT_OWNER_LABEL}"}}`]);
  if (listed.exitCode !== 0) return 0;
  const orphans = listed.stdout
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([id, owner]) => {
      const [host, namespace, pid] = (owner ?? '').split('/');
      return id && `${host}/${namespace}` === `${hostname()}/${pidNamespace()}` && !isAlive(Number(pid));
    })
    .map(([id]) => id!);
  if (orphans.length === 0) return 0;
  const removed = await docker(['rm', '--force', ...orphans]);
  return removed.stdout.split('\n').filter(Boolean).length;
}
