import { execa } from 'execa';

/** Label every agent container carries with its own launch's name: how Genesis finds exactly its containers. */
export const AGENT_LAUNCH_LABEL = 'genesis.agent.launch';

export interface RemoveAgentContainerOptions {
  /** The docker client's environment (where it finds the daemon). */
  env: Record<string, string>;
  /**
   * Keeps looking this long even when nothing is there yet: after a `docker create` whose client
   * was given up on, the daemon may still make the container. @default 0
   */
  lingerMs?: number;
  /** Gives up after this long (a daemon that does not answer). @default 30_000 */
  deadlineMs?: number;
}

const POLL_MS = 200;

/**
 * Removes the agent container `name` (everything labelled with its launch), and looks again
 * until none is left: a removal that raced another (the launcher's own `docker rm`, cut short by
 * the kill) is still under way in the daemon when the second is refused. Never throws: a daemon
 * that does not answer leaves nothing to remove that this call could reach.
 */
export async function removeAgentContainer(name: string, options: RemoveAgentContainerOptions): Promise<void> {
  const started = Date.now();
  const docker = (args: string[]) => execa('docker', args, { reject: false, timeout: 30_000, env: options.env, extendEnv: false });
  // The label is the container's from its create on: one look finds it, or finds that the launcher removed it.
  for (;;) {
    const listed = await docker(['ps', '--all', '--quiet', '--filter', `label=${AGENT_LAUNCH_LABEL}=${name}`]);
    if (listed.exitCode !== 0) return;
    const ids = listed.stdout.split('\n').filter(Boolean);
    const elapsed = Date.now() - started;
    if ((ids.length === 0 && elapsed >= (options.lingerMs ?? 0)) || elapsed >= (options.deadlineMs ?? 30_000)) return;
    const removed = ids.length > 0 && (await docker(['rm', '--force', ...ids])).exitCode === 0;
    if (!removed) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
