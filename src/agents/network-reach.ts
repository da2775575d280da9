import { agentConfigForAttempt } from '../manifest/agent-config.js';
import type { WorldManifest } from '../manifest/schema.js';
import { agentEndpoints, endpointEntry, isLoopbackHost } from '../sandbox/egress/endpoints.js';

/** What `genesis run` says at start about where a world's agents may connect. */
export interface AgentReach {
  /** One line: the endpoints and what else. */
  line: string;
  /** Said as a warning (the host network, acknowledged). */
  warning?: string;
}

/**
 * Where the agents of `agent` (and of each rotation entry) may connect, in words, from the
 * manifest alone: the model endpoints of their baseUrls, and what their sandbox and
 * `agent.network` add. Null when no agent runs a process (script and sim agents) or when the
 * agent is unconfined (`none`, which has its own warning). `filtered`: the namespace's packet
 * filter is set (root), which also keeps this host's own addresses out of reach.
 */
export function describeAgentReach(agent: WorldManifest['agent'], filtered = process.getuid?.() === 0): AgentReach | null {
  const configs = [agent, ...agent.rotation.map((_, i) => agentConfigForAttempt(agent, i + 1))];
  if (!configs.some((c) => c.kind === 'command' || c.kind === 'openai') || agent.sandbox === 'none') return null;
  const seen = new Set<string>();
  const models: string[] = [];
  for (const config of configs) {
    for (const endpoint of agentEndpoints(config)) {
      const entry = endpointEntry(endpoint);
      if (seen.has(entry)) continue;
      seen.add(entry);
      models.push(`${entry}${isLoopbackHost(endpoint.host) ? " (this host's loopback, that port only)" : ''}`);
    }
  }
  const model = models.length > 0 ? `its model at ${models.join(', ')} (agent.baseUrl)` : null;
  const network = agent.network;
  if (typeof network !== 'string' && 'mode' in network) {
    return {
      line: `agent network: the host's own (agent.network.mode: host): every service of this host and everything it reaches`,
      warning: `agent.network is the host network, acknowledged as "${network.acknowledge}": the agent reaches Redis, the dashboard and every other port of this host`,
    };
  }
  if (agent.sandbox === 'docker') {
    const name = typeof network === 'string' ? network : (network.docker ?? 'genesis-agents');
    return { line: `agent network: docker network ${name}${model ? `; ${model}` : ''}` };
  }
  if (typeof network !== 'string') {
    const parts = [model, `through a proxy ${network.allow.join(', ')} (agent.network.allow; a host without a port: 80 and 443)`].filter(Boolean);
    return { line: `agent network: own namespace; the agent may reach ${parts.join('; ')}; nothing else` };
  }
  const parts = [model, 'hosts outside this machine'].filter(Boolean);
  const rest = filtered
    ? 'no other address or port of this host'
    : "no other port of this host's loopback (this host's other addresses are filtered only when Genesis runs as root)";
  return { line: `agent network: own namespace; the agent may reach ${parts.join('; ')}; ${rest}` };
}
