import { execa } from 'execa';
import { GenesisError } from '../../../errors/genesis-error.js';

/** Networks Docker always has: used as they are, never created. */
const BUILT_IN = new Set(['none', 'host', 'bridge', 'default']);
const ensured = new Map<string, Promise<void>>();

/**
 * Makes sure the agents' network exists: a user-defined bridge network, created on first use.
 * A user-defined network works where the default bridge is turned off (`dockerd --bridge none`);
 * whether its containers reach the internet depends on the daemon's NAT (`--iptables`, the
 * default): without it they reach only this host, at the network's gateway address.
 */
export function ensureAgentNetwork(name: string): Promise<void> {
  if (BUILT_IN.has(name)) return Promise.resolve();
  let done = ensured.get(name);
  if (!done) {
    done = createIfMissing(name);
    ensured.set(name, done);
    done.catch(() => ensured.delete(name));
  }
  return done;
}

/**
 * The address of this host on the agents' network (its gateway): the one address of this host
 * its containers reach, where the model gateway listens for them. Null for a network without one.
 */
export async function agentNetworkGateway(name: string): Promise<string | null> {
  const inspected = await execa('docker', ['network', 'inspect', '-f', '{{range .IPAM.Config}}{{.Gateway}} {{end}}', name], { reject: false, timeout: 30_000 });
  const address = inspected.exitCode === 0 ? inspected.stdout.trim().split(/\s+/)[0] : '';
  return address ? address : null;
}

async function createIfMissing(name: string): Promise<void> {
  const exists = async () => (await execa('docker', ['network', 'inspect', name], { reject: false, timeout: 30_000 })).exitCode === 0;
  if (await exists()) return;
  const created = await execa('docker', ['network', 'create', '--driver', 'bridge', '--label', 'genesis.network=agents', name], {
    reject: false,
    timeout: 30_000,
  });
  // Another process may have created it in the meantime.
  if (created.exitCode === 0 || (await exists())) return;
  throw new GenesisError('agent-sandbox-unavailable', `the agents' docker network ${name} cannot be created: ${created.stderr.trim()}`, {
    hint: 'create it yourself (`docker network create genesis-agents`) or name an existing one in agent.network',
  });
}
