import { GenesisError } from '../errors.js';
import type { AgentSandbox, AgentSandboxKind } from './agent-sandbox.js';
import { BwrapAgentSandbox } from './agent-sandbox-bwrap.js';
import { DockerAgentSandbox } from './agent-sandbox-docker.js';
import { NoneAgentSandbox } from './agent-sandbox-none.js';

/** What `agent.sandbox` may say: an adapter, or `auto` (the default). */
export type AgentSandboxChoice = AgentSandboxKind | 'auto';

export interface AgentSandboxOptions {
  kind: AgentSandboxChoice;
  /** Image of the docker adapter. */
  image: string;
  /** `agent.network`: the docker adapter's network, or an egress allow-list. */
  network: string | { allow: readonly string[]; docker?: string | undefined };
}

/**
 * The agent sandbox a manifest asks for (`agent.sandbox`), checked to be usable: rejects with a
 * GenesisError and a hint when it is not. `auto` is bubblewrap with a network namespace of the
 * agent's own; docker only when asked. Unlike the gate's `auto`, there is no fallback: an agent
 * runs unconfined only when the manifest says `none`, never because confinement failed.
 */
export async function createAgentSandbox(options: AgentSandboxOptions): Promise<AgentSandbox> {
  const allow = typeof options.network === 'string' ? undefined : options.network.allow;
  const network = typeof options.network === 'string' ? options.network : (options.network.docker ?? 'genesis-agents');
  if (allow && (options.kind === 'docker' || options.kind === 'none')) {
    throw new GenesisError(
      'agent-sandbox-unavailable',
      `agent.network.allow is enforced by the bubblewrap agent sandbox, not by agent.sandbox: ${options.kind}`,
      {
        hint: 'remove agent.sandbox (the default, auto, enforces the list) or remove agent.network.allow',
      },
    );
  }
  const sandbox =
    options.kind === 'docker'
      ? new DockerAgentSandbox({ image: options.image, network })
      : options.kind === 'bwrap' || options.kind === 'auto'
        ? new BwrapAgentSandbox(allow)
        : new NoneAgentSandbox();
  await sandbox.check();
  return sandbox;
}

/**
 * Whether a world's agents start processes of their own (command and openai agents, in any
 * rotation entry), so that where they run matters; script and sim agents only write files.
 */
export function agentsRunProcesses(agent: {
  kind: string;
  rotation: ReadonlyArray<{ kind?: string | undefined; preset?: unknown; command?: unknown }>;
}): boolean {
  const runs = (kind: string | undefined) => kind === 'command' || kind === 'openai';
  return runs(agent.kind) || agent.rotation.some((entry) => runs(entry.kind) || entry.preset !== undefined || entry.command !== undefined);
}
