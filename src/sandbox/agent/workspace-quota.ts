import { confineDisk, isDiskFull } from '../process/disk-quota.js';
import type { AgentLaunch, AgentSandboxSpec } from '../agent-sandbox.js';

/**
 * Puts the workspace and the private HOME of a launch under its disk quota (`spec.diskMb`), each
 * a size-limited tmpfs holding what it held; returns how to tell afterwards whether the agent
 * filled one. The mounts stay until the episode's directory is removed (removeTree unmounts
 * them), so the candidate is read from them first.
 */
export async function confineAgentDisk(spec: AgentSandboxSpec): Promise<Pick<AgentLaunch, 'diskFull'>> {
  if (spec.diskMb === undefined) return {};
  await confineDisk(spec.workspace, spec.diskMb);
  await confineDisk(spec.home, spec.diskMb);
  return { diskFull: async () => (await isDiskFull(spec.workspace)) || (await isDiskFull(spec.home)) };
}
