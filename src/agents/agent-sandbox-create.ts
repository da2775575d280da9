import type { AgentSandbox, AgentSandboxKind } from './agent-sandbox.js';
import { BwrapAgentSandbox } from './agent-sandbox-bwrap.js';
import { DockerAgentSandbox } from './agent-sandbox-docker.js';
import { NoneAgentSandbox } from './agent-sandbox-none.js';

export interface AgentSandboxOptions {
  kind: AgentSandboxKind;
  /** Image of the docker adapter. */
  image: string;
  /** Network of the docker adapter. */
  network: string;
}

/**
 * The agent sandbox a manifest asks for (`agent.sandbox`), checked to be usable: rejects with a
 * GenesisError and a hint when it is not. Unlike the gate's `auto`, there is no fallback: an agent
 * asked to run isolated never silently runs on the host.
 */
export async function createAgentSandbox(options: AgentSandboxOptions): Promise<AgentSandbox> {
  const sandbox =
    options.kind === 'docker'
      ? new DockerAgentSandbox({ image: options.image, network: options.network })
      : options.kind === 'bwrap'
        ? new BwrapAgentSandbox()
        : new NoneAgentSandbox();
  await sandbox.check();
  return sandbox;
}
