import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { hostAddressGuard } from './host-address-guard.js';
import { hostNetworks, inNetworkNamespace, NETNS_GATEWAY, netnsResolvConf, type NetnsTools } from './network-namespace.js';
import type { AgentNetnsPool } from './pool.js';
import { startEgressProxy } from '../egress/egress-proxy.js';
import { endpointEntry, isLoopbackHost, type AgentEndpoint } from '../egress/endpoints.js';
import { startEndpointBridge } from '../egress/endpoint-bridge.js';

/** The network namespace one bubblewrap agent runs in, and how its command joins it. */
export interface AgentNetwork {
  /** bubblewrap's options for the IPC and UTS namespaces (hostname `agent`), unless they come made with the network. */
  bwrapNamespaces: readonly string[];
  /** The host file the agent reads as /etc/resolv.conf. */
  resolvConf: string;
  /** The argv that runs `argv` inside the namespace. */
  wrap(argv: readonly string[]): string[];
  /** Variables the agent needs to use it (its proxy's, with an allow-list). */
  env: Record<string, string>;
  /** Requests the egress proxy refused (only with an allow-list). */
  egressRefused?(): number;
  /** Connections to a model endpoint on this host's loopback that this host refused (only with such an endpoint). */
  endpointFailures?(): number;
  /** Ends what serves the namespace; after the agent's processes are gone the namespace goes too. */
  dispose(): Promise<void>;
}

/**
 * A network namespace for one agent: taken ready from `pool` when there is one (root, no
 * allow-list, no model endpoint on this host: the pool's namespaces carry the filter of this
 * host's networks as they are now), otherwise made at launch by the launcher of agent-netns.ts,
 * with the egress proxy for an allow-list. Either way the agent gets a namespace nobody used
 * before, with the same filter.
 *
 * `endpoints` (the models its baseUrl names) are reachable whatever the rest says: one on this
 * host's loopback through the bridge (endpoint-bridge.ts), one on another of this host's
 * addresses through a hole in the filter for its one port, and each on the allow-list as
 * `host:port` when there is a list.
 */
export async function agentNetwork(
  tools: NetnsTools,
  allow: readonly string[] | undefined,
  pool: AgentNetnsPool | undefined,
  endpoints: readonly AgentEndpoint[] = [],
  /** The host port every loopback endpoint leads to (the episode's model gateway); else each leads to itself. */
  modelPort?: number,
): Promise<AgentNetwork> {
  const loopback = endpoints.filter((e) => isLoopbackHost(e.host));
  const local = new Set(hostNetworks().map((net) => net.replace(/\/32$/, '')));
  const accept = endpoints.filter((e) => local.has(e.host));
  const slot = !allow && loopback.length === 0 && accept.length === 0 && pool && tools.iptablesRestore ? await pool.take(hostNetworks()) : null;
  if (slot) {
    const resolvConf = await pool!.resolvConf().catch((error: unknown) => {
      pool!.release(slot);
      throw error;
    });
    // The slot's IPC and UTS namespaces are as fresh as bubblewrap's would be: made for this agent alone.
    let released = false;
    const release = async () => {
      // A launch may be disposed twice (AgentLaunch): the namespace goes back once.
      if (!released) pool!.release(slot);
      released = true;
    };
    return { bwrapNamespaces: [], resolvConf, wrap: (argv) => slot.enter(argv), env: {}, dispose: release };
  }
  // Private to this launch and outside the sandbox's view: the FIFOs of the network's start-up, the bridge's sockets.
  const netDir = await mkdtemp(join(tmpdir(), 'genesis-agent-net-'));
  const resolvConf = join(netDir, 'resolv.conf');
  await writeFile(resolvConf, netnsResolvConf());
  const list = allow ? [...allow, ...endpoints.map(endpointEntry)] : undefined;
  // Root only (the filter's tools are found only then): this host's addresses as they are when each packet is sent.
  const guard = tools.iptablesRestore && !allow ? await hostAddressGuard(tools.iptablesRestore) : null;
  const holes = guard && accept.length > 0 ? await guard.openHoles(accept, basename(netDir)) : null;
  const cgroupDir = holes?.cgroupDir ?? guard?.cgroupDir;
  const proxy = list ? await startEgressProxy(list) : null;
  const bridge =
    loopback.length > 0
      ? await startEndpointBridge(netDir, loopback, modelPort).catch(async (error: unknown) => {
          await proxy?.close();
          throw error;
        })
      : null;
  return {
    bwrapNamespaces: ['--unshare-ipc', '--unshare-uts', '--hostname', 'agent'],
    resolvConf,
    wrap: (argv) =>
      inNetworkNamespace(argv, netDir, tools, proxy?.port, {
        accept,
        ...(bridge ? { bridgeNode: process.execPath } : {}),
        ...(cgroupDir !== undefined ? { cgroupDir } : {}),
      }),
    env: proxy ? proxyVariables(proxy.urlFrom(NETNS_GATEWAY), loopback) : {},
    ...(proxy ? { egressRefused: () => proxy.refused() } : {}),
    ...(bridge ? { endpointFailures: () => bridge.failedConnects() } : {}),
    dispose: async () => {
      await proxy?.close();
      await bridge?.close();
      await holes?.close();
      await rm(netDir, { recursive: true, force: true });
    },
  };
}

/**
 * The variables HTTP clients read their proxy from, in both spellings; nothing bypasses it but the
 * model endpoints on loopback, which the bridge carries (a client that proxied them would reach
 * them through the proxy all the same).
 */
function proxyVariables(url: string, bridged: readonly AgentEndpoint[]): Record<string, string> {
  const direct = [...new Set(bridged.map((e) => e.host))].join(',');
  const env: Record<string, string> = { NO_PROXY: direct, no_proxy: direct };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  return env;
}
