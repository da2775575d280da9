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
    const problem = await connectProblem(endpoint, timeoutMs);
    if (problem === null) continue;
    throw new GenesisError(
      'agent-unreachable-model',
      `the agent's model endpoint ${endpoint.url} does not accept connections on ${endpoint.host}:${endpoint.port} (${problem})`,
      { hint: 'start the model server (or the gateway) it names, or fix agent.baseUrl in world.yaml; then run again' },
    );
  }
}

/** Why one connect to `endpoint` failed (an error code, or no answer in time), or null when it was accepted. Sends nothing. */
export function connectProblem(endpoint: Pick<AgentEndpoint, 'host' | 'port'>, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | null> {
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

/** How often a running agent's failed connects to its model are looked at. */
const WATCH_EVERY_MS = 1_000;

/**
 * Watches a running agent's model endpoints: when `failures` (connects this host refused, counted
 * by the sandbox's bridge) has grown since the last look, probes them again, and calls `gone` with
 * the `agent-unreachable-model` error once one no longer accepts connections (the model server
 * went away during the episode; the CLI would retry until its timeout). Returns the stop.
 */
export function watchEndpoints(failures: () => number, endpoints: readonly AgentEndpoint[], gone: (error: GenesisError) => void): () => void {
  let seen = 0;
  let probing = false;
  let stopped = false;
  const timer = setInterval(() => {
    const now = failures();
    if (probing || now === seen) return;
    seen = now;
    probing = true;
    probeEndpoints(endpoints).then(
      () => {
        probing = false;
      },
      (error: unknown) => {
        probing = false;
        if (!stopped && error instanceof GenesisError) gone(error);
      },
    );
  }, WATCH_EVERY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
