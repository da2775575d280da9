import { GenesisError } from '../errors/genesis-error.js';
import type { AgentSandbox, AgentSandboxKind } from './agent-sandbox.js';
import { sharedAgentNetnsPool } from './netns/pool.js';
import { BwrapAgentSandbox } from './agent/bwrap-agent-sandbox.js';
import { DockerAgentSandbox } from './agent/docker/docker-agent-sandbox.js';
import { NoneAgentSandbox } from './agent/none-agent-sandbox.js';

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
 * GenesisError and a hint when it is not. The same options give the same checked sandbox for a
 * few minutes (see `probed`). `auto` is bubblewrap with a network namespace of the
 * agent's own (as root, taken from the process's pool of namespaces made ahead,
 * sharedAgentNetnsPool); docker only when asked. Unlike the gate's `auto`, there is no fallback: an agent
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
  const key = JSON.stringify([options.kind, options.image, options.network]);
  const kept = probed.get(key);
  if (kept && Date.now() - kept.at < PROBE_STANDS_MS) return kept.sandbox;
  const sandbox =
    options.kind === 'docker'
      ? new DockerAgentSandbox({ image: options.image, network })
      : options.kind === 'bwrap' || options.kind === 'auto'
        ? new BwrapAgentSandbox(allow, allow ? undefined : (sharedAgentNetnsPool() ?? undefined))
        : new NoneAgentSandbox();
  const checked = sandbox.check().then(() => sandbox);
  probed.set(key, { sandbox: checked, at: Date.now() });
  checked.catch(() => {
    if (probed.get(key)?.sandbox === checked) probed.delete(key);
  });
  return checked;
}

/**
 * Agent sandboxes whose probe passed in this process, by what they were made from. A probe starts
 * bubblewrap twice (once with a network namespace): 0.3-1.1 s on a loaded 2-core machine, which a
 * BullMQ worker, making the agent of each job, paid on every job. A failed probe is not kept; a
 * passed one stands for a few minutes, so a long-lived worker notices a sandbox that broke.
 */
const probed = new Map<string, { sandbox: Promise<AgentSandbox>; at: number }>();
const PROBE_STANDS_MS = 5 * 60_000;

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
