import { GenesisError } from '../errors/genesis-error.js';
import type { AgentSandbox, AgentSandboxKind } from './agent-sandbox.js';
import { sharedAgentNetnsPool } from './netns/pool.js';
import { BwrapAgentSandbox } from './agent/bwrap-agent-sandbox.js';
import { DockerAgentSandbox } from './agent/docker/docker-agent-sandbox.js';
import { NoneAgentSandbox } from './agent/none-agent-sandbox.js';
import { isLoopbackHost, type AgentEndpoint } from './egress/endpoints.js';

/** What `agent.sandbox` may say: an adapter, or `auto` (the default). */
export type AgentSandboxChoice = AgentSandboxKind | 'auto';

/** `agent.network` as the manifest has it. */
export type AgentNetworkChoice = string | { allow: readonly string[]; docker?: string | undefined } | { mode: 'host'; acknowledge: string };

export interface AgentSandboxOptions {
  kind: AgentSandboxChoice;
  /** Image of the docker adapter. */
  image: string;
  /** `agent.network`: the docker adapter's network, an egress allow-list, or the acknowledged host network. */
  network: AgentNetworkChoice;
  /** The model endpoints the agent reaches whatever else is closed (agentEndpoints: its baseUrl). @default [] */
  endpoints?: readonly AgentEndpoint[];
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
  const choice = options.network;
  const allow = typeof choice !== 'string' && 'allow' in choice ? choice.allow : undefined;
  const hostNetwork = typeof choice !== 'string' && 'mode' in choice;
  const network = typeof choice === 'string' ? choice : 'allow' in choice ? (choice.docker ?? 'genesis-agents') : 'host';
  if (choice === 'host') {
    throw new GenesisError('agent-sandbox-unavailable', "agent.network: host would give the agent every service of this host's loopback", {
      hint: 'remove agent.network (the model of agent.baseUrl stays reachable), or write agent.network: { mode: host, acknowledge: "<why>" }',
    });
  }
  if (allow && (options.kind === 'docker' || options.kind === 'none')) {
    throw new GenesisError(
      'agent-sandbox-unavailable',
      `agent.network.allow is enforced by the bubblewrap agent sandbox, not by agent.sandbox: ${options.kind}`,
      {
        hint: 'remove agent.sandbox (the default, auto, enforces the list) or remove agent.network.allow',
      },
    );
  }
  const endpoints = options.endpoints ?? [];
  const loopback = endpoints.find((e) => isLoopbackHost(e.host));
  if (loopback && options.kind === 'docker' && !hostNetwork) {
    throw new GenesisError(
      'agent-sandbox-unavailable',
      `the model endpoint ${loopback.url} is on this host's loopback, which the docker agent sandbox cannot reach (its container's 127.0.0.1 is its own)`,
      { hint: 'remove agent.sandbox (the default, auto, reaches exactly that port), or point agent.baseUrl at an address the container reaches' },
    );
  }
  const key = JSON.stringify([options.kind, options.image, options.network, endpoints.map((e) => [e.host, e.port])]);
  const kept = probed.get(key);
  if (kept && Date.now() - kept.at < PROBE_STANDS_MS) return kept.sandbox;
  const sandbox =
    options.kind === 'docker'
      ? new DockerAgentSandbox({ image: options.image, network })
      : options.kind === 'bwrap' || options.kind === 'auto'
        ? new BwrapAgentSandbox(allow, allow ? undefined : (sharedAgentNetnsPool() ?? undefined), { endpoints, hostNetwork })
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
 * bubblewrap twice (once with a network namespace), up to a second on a busy host, which a
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
