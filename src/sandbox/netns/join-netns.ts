import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostNetworks, inNetworkNamespace, NETNS_GATEWAY, netnsResolvConf, type NetnsTools } from './network-namespace.js';
import type { AgentNetnsPool } from './pool.js';
import { startEgressProxy } from '../egress/egress-proxy.js';

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
  /** Ends what serves the namespace; after the agent's processes are gone the namespace goes too. */
  dispose(): Promise<void>;
}

/**
 * A network namespace for one agent: taken ready from `pool` when there is one (root, no
 * allow-list: the pool's namespaces carry the filter of this host's networks as they are now),
 * otherwise made at launch by the launcher of agent-netns.ts, with the egress proxy for an
 * allow-list. Either way the agent gets a namespace nobody used before, with the same filter.
 */
export async function agentNetwork(tools: NetnsTools, allow: readonly string[] | undefined, pool: AgentNetnsPool | undefined): Promise<AgentNetwork> {
  const slot = !allow && pool && tools.iptablesRestore ? await pool.take(hostNetworks()) : null;
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
  // Private to this launch and outside the sandbox's view: the FIFOs of the network's start-up.
  const netDir = await mkdtemp(join(tmpdir(), 'genesis-agent-net-'));
  const resolvConf = join(netDir, 'resolv.conf');
  await writeFile(resolvConf, netnsResolvConf());
  const proxy = allow ? await startEgressProxy(allow) : null;
  return {
    bwrapNamespaces: ['--unshare-ipc', '--unshare-uts', '--hostname', 'agent'],
    resolvConf,
    wrap: (argv) => inNetworkNamespace(argv, netDir, tools, proxy?.port),
    env: proxy ? proxyVariables(proxy.urlFrom(NETNS_GATEWAY)) : {},
    ...(proxy ? { egressRefused: () => proxy.refused() } : {}),
    dispose: async () => {
      await proxy?.close();
      await rm(netDir, { recursive: true, force: true });
    },
  };
}

/** The variables HTTP clients read their proxy from, in both spellings; nothing bypasses it. */
function proxyVariables(url: string): Record<string, string> {
  const env: Record<string, string> = { NO_PROXY: '', no_proxy: '' };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  return env;
}
