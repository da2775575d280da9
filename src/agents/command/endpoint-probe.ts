import { connect } from 'node:net';
import { GenesisError } from '../../errors/genesis-error.js';
import type { AgentEndpoint } from '../../sandbox/egress/endpoints.js';

/** How long a connect to a model endpoint may take before it counts as unreachable. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Rejects with `agent-unreachable-model` when one of `endpoints` does not accept a TCP connection
 * from this host (the model server is not running, the port is wrong): the agent could not reach
 * it either, and every CLI would retry until `agent.timeoutSec`. Connects only, sends nothing.
 */
export async function probeEndpoints(endpoints: readonly AgentEndpoint[], timeoutMs = PROBE_TIMEOUT_MS): Promise<void> {
  for (const endpoint of endpoints) {
    const problem = await connectOnce(endpoint, timeoutMs);
    if (problem === null) continue;
    throw new GenesisError(
      'agent-unreachable-model',
      `the agent's model endpoint ${endpoint.url} does not accept connections on ${endpoint.host}:${endpoint.port} (${problem})`,
      { hint: 'start the model server (or the gateway) it names, or fix agent.baseUrl in world.yaml; then run again' },
    );
  }
}

function connectOnce(endpoint: AgentEndpoint, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: endpoint.host === 'localhost' ? '127.0.0.1' : endpoint.host, port: endpoint.port });
    const end = (problem: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => end(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    socket.once('connect', () => end(null));
    socket.once('error', (error: NodeJS.ErrnoException) => end(error.code ?? error.message));
  });
}
