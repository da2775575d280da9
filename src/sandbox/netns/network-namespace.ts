import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { GenesisError } from '../../errors/genesis-error.js';
import { resolveOnPath } from '../agent/find-binary.js';

/** The address of slirp4netns's DNS forwarder inside the namespace. */
export const NETNS_DNS = '10.0.2.3';

const HINT = 'Run `bash scripts/setup-services.sh bwrap` to install slirp4netns, or set agent.sandbox to docker (a network of its own) or none.';

/**
 * The shell that starts a command in a network namespace of its own, connected to the outside
 * by slirp4netns (user-mode networking: the agent's connections leave from this host's network
 * stack as ordinary sockets) with the host's loopback cut off (`--disable-host-loopback`: the
 * gateway 10.0.2.2 does not lead to 127.0.0.1, and the namespace's own 127.0.0.1 is its own).
 * So an agent reaches its model and the internet, and not Redis, the dashboard or anything else
 * listening on this host's loopback; the Docker socket is a file, hidden by the mount namespace.
 *
 * `$1` is a private directory for the two FIFOs, `$2` `root` or `user` (an unprivileged user
 * needs a user namespace for the network namespace), `$3` and `$4` the paths of unshare and
 * slirp4netns (the agent's PATH need not find them), `$9` the path of setpriv (slirp4netns dies
 * with the launcher), the rest the command. The command waits
 * until its network is up; the shell then waits for it, stops slirp4netns and exits with the
 * command's code. Everything stays in the caller's process group, so killing the group stops
 * slirp4netns too.
 *
 * With an egress allow-list, `$5` is the port of the agent's proxy on this host's loopback: the
 * gateway then leads to the host's loopback, and before the command starts, a packet filter in the
 * namespace (iptables-restore, `$6`, through nsenter, `$7`; the agent, without capabilities,
 * cannot change it) lets out only loopback and that one port of the gateway, and rejects
 * everything else: the proxy is the only way out. Root only. `$5` is `-` without a list.
 *
 * Without a list, the same filter rejects this host's own addresses and its container bridges'
 * subnets, so a service listening on 0.0.0.0 of this host, or in a container on it (a compose
 * Redis), is out of reach too. `$8` is the filter (egressRules), `-` for none.
 *
 * `$11` is the cgroup directory slirp4netns joins before it starts (the host address guard, which
 * rejects on this host whatever its sockets send to an address this host has when it is sent),
 * `-` for none.
 *
 * `$10` is the Node that runs the bridge to the model endpoints on this host's loopback, `-` for
 * none: once the namespace is up, and before the command starts, `$1/bridge.cjs` (ENDPOINT_BRIDGE)
 * listens inside the namespace on each endpoint's address and port and forwards every connection
 * to a Unix socket of Genesis (endpoint-bridge.ts), which connects to the endpoint on this host.
 * It runs outside the agent's mount namespace (the agent never sees the sockets) and dies with it.
 * Its output goes to `$1/bridge.log`, never to the agent's: Node makes the stdout and stderr it
 * holds non-blocking, and that flag belongs to the open file they share with the agent, whose
 * blocking writes would then fail (Codex's Rust binary panics on EAGAIN printing a large event).
 */
const LAUNCHER = `
INSIDE='
d=$0; bridge=$1; setpriv=$2; shift 2
read _ < "$d/go" || exit 125
if [ "$bridge" != - ]; then
  mkfifo "$d/bridged" || exit 125
  "$setpriv" --pdeathsig KILL "$bridge" "$d/bridge.cjs" "$d/bridge.json" 4>"$d/bridged" </dev/null >/dev/null 2>"$d/bridge.log" &
  read ok < "$d/bridged"
  if [ "$ok" != ok ]; then echo "genesis: the bridge to the agent'"'"'s model endpoint did not start: $(cat "$d/bridge.log")" >&2; exit 125; fi
fi
exec "$@"
'
d=$1; mode=$2; unshare=$3; slirp4netns=$4; proxy=$5; restore=$6; nsenter=$7; rules=$8; setpriv=$9; bridge=\${10}; cgroup=\${11}; shift 11
mkfifo "$d/ready" "$d/go" || exit 125
if [ "$mode" = root ]; then ns="--net"; else ns="--user --map-current-user --net"; fi
exec 3<&0
"$unshare" $ns -- /bin/sh -c "$INSIDE" "$d" "$bridge" "$setpriv" "$@" <&3 3<&- &
child=$!
exec 3<&-
# Until unshare has run, /proc/$child/ns/net is this host's own namespace: slirp4netns and the
# filter below must never be pointed at it (a filter restored there replaces the host's firewall).
# test's -ef (same namespace) is the shell's own: the first looks spin (unshare takes a few ms), later ones sleep.
tries=0
while [ /proc/$child/ns/net -ef /proc/$$/ns/net ]; do
  tries=$((tries + 1))
  if [ "$tries" -gt 5000 ]; then echo "genesis: the agent's network namespace was not created" >&2; kill -9 "$child" 2>/dev/null; exit 125; fi
  if [ "$tries" -gt 2000 ]; then sleep 0.01; fi
done
if [ "$mode" = root ]; then userns=""; else userns="--userns-path=/proc/$child/ns/user"; fi
if [ "$proxy" = - ]; then loopback=--disable-host-loopback; else loopback=""; fi
# slirp4netns joins the guard's cgroup before it runs (see host-address-guard.ts); if it cannot, it never starts.
"$setpriv" --pdeathsig KILL /bin/sh -c 'if [ "$0" != - ]; then echo $$ > "$0/cgroup.procs" || exit 125; fi; exec "$@"' "$cgroup" \
  "$slirp4netns" --configure --mtu=65520 $loopback $userns --ready-fd=4 "$child" tap0 4>"$d/ready" >"$d/slirp.log" 2>&1 &
slirp=$!
# slirp4netns writes one byte when the network is up and closes the FIFO; nothing if it failed.
if [ -z "$(head -c 1 "$d/ready")" ]; then
  echo "genesis: the agent's network (slirp4netns) did not start: $(cat "$d/slirp.log")" >&2
  kill -9 "$child" 2>/dev/null; exit 125
fi
if [ "$rules" != - ]; then
  if [ /proc/$child/ns/net -ef /proc/$$/ns/net ] ||
    ! printf '%s' "$rules" | "$nsenter" -t "$child" -n "$restore" 2>"$d/filter.log"; then
    echo "genesis: the agent's egress filter could not be set: $(cat "$d/filter.log")" >&2
    kill -9 "$child" "$slirp" 2>/dev/null; exit 125
  fi
fi
echo go > "$d/go"
wait "$child"; rc=$?
kill "$slirp" 2>/dev/null
exit $rc
`;

/**
 * The argv that runs `argv` in a network namespace of its own (see LAUNCHER); `dir` is an empty
 * private directory that outlives the run.
 */
export function inNetworkNamespace(argv: readonly string[], dir: string, tools: NetnsTools, proxyPort?: number, reach: NamespaceReach = {}): string[] {
  const filter = tools.iptablesRestore !== undefined && tools.nsenter !== undefined;
  const blocked = filter && proxyPort === undefined ? hostNetworks() : [];
  const egress = [
    proxyPort === undefined ? '-' : String(proxyPort),
    tools.iptablesRestore ?? '-',
    tools.nsenter ?? '-',
    filter && (proxyPort !== undefined || blocked.length > 0) ? egressRules(proxyPort, blocked, reach.accept ?? []) : '-',
    tools.setpriv,
    reach.bridgeNode ?? '-',
    reach.cgroupDir ?? '-',
  ];
  // The launcher dies with Genesis (even at kill -9), and bwrap (--die-with-parent) and slirp4netns with it.
  return [
    tools.setpriv,
    '--pdeathsig',
    'KILL',
    '/bin/sh',
    '-c',
    LAUNCHER,
    'genesis-agent-net',
    dir,
    process.getuid?.() === 0 ? 'root' : 'user',
    tools.unshare,
    tools.slirp4netns,
    ...egress,
    ...argv,
  ];
}

/** What a namespace lets its agent reach besides the default (see LAUNCHER). */
export interface NamespaceReach {
  /** IPv4 endpoints of this host's own addresses let through the filter, each on its one port (no proxy). */
  accept?: readonly { host: string; port: number }[];
  /** The Node that runs `dir/bridge.cjs` in the namespace (the loopback endpoints); none when absent. */
  bridgeNode?: string;
  /** The cgroup slirp4netns runs in: the host address guard's (host-address-guard.ts); none when absent. */
  cgroupDir?: string;
}

/**
 * The packet filter of an agent's network namespace (iptables-restore's input): loopback allowed;
 * with an egress proxy, only its port on the gateway and nothing else; without, everything but
 * `blocked` (this host's own addresses and bridges, hostNetworks()), save the `accept` endpoints
 * (an IPv4 address and one TCP port each: a model endpoint on one of those addresses).
 */
export function egressRules(proxyPort: number | undefined, blocked: readonly string[], accept: readonly { host: string; port: number }[] = []): string {
  const out =
    proxyPort !== undefined
      ? [`-A OUTPUT -d ${NETNS_GATEWAY}/32 -p tcp --dport ${proxyPort} -j ACCEPT`, '-A OUTPUT -j REJECT']
      : [
          ...accept.filter((e) => isIP(e.host) === 4).map((e) => `-A OUTPUT -d ${e.host}/32 -p tcp --dport ${e.port} -j ACCEPT`),
          ...blocked.map((net) => `-A OUTPUT -d ${net} -j REJECT`),
        ];
  return ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD DROP [0:0]', ':OUTPUT ACCEPT [0:0]', '-A OUTPUT -o lo -j ACCEPT', ...out, 'COMMIT', ''].join('\n');
}

/**
 * What an agent must not reach besides this host's loopback: each IPv4 address of this host, and
 * the subnets of its container bridges (docker0, br-…), read afresh at each launch.
 */
export function hostNetworks(interfaces = networkInterfaces()): string[] {
  const nets = new Set<string>();
  for (const [name, addresses] of Object.entries(interfaces)) {
    for (const address of addresses ?? []) {
      if (address.family !== 'IPv4' || address.internal) continue;
      nets.add(`${address.address}/32`);
      if ((name === 'docker0' || name.startsWith('br-')) && address.cidr) nets.add(address.cidr);
    }
  }
  return [...nets];
}

/** Where the programs of a network namespace are (the last two only for an egress allow-list). */
export interface NetnsTools {
  unshare: string;
  slirp4netns: string;
  setpriv: string;
  iptablesRestore?: string;
  nsenter?: string;
}

/** The gateway address of the namespace, where the agent finds its proxy. */
export const NETNS_GATEWAY = '10.0.2.2';

/** The resolver configuration an agent in such a namespace reads as /etc/resolv.conf. */
export function netnsResolvConf(): string {
  return `nameserver ${NETNS_DNS}\n`;
}

const SEARCH = `${process.env.PATH ?? ''}:/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin`;

/** Finds the programs of a network namespace; rejects with a GenesisError when one is missing. */
export async function findNetnsTools(): Promise<NetnsTools> {
  const find = async (tool: string) => {
    const path = await resolveOnPath(tool, SEARCH, '/');
    if (path === null)
      throw new GenesisError('agent-sandbox-unavailable', `${tool} is not installed, so an agent cannot get a network of its own`, { hint: HINT });
    return path;
  };
  return { unshare: await find('unshare'), slirp4netns: await find('slirp4netns'), setpriv: await find('setpriv') };
}

/**
 * The packet filter's programs, when Genesis runs as root (a namespace's filter needs the
 * capability an unprivileged user lacks); rejects when root lacks them.
 */
export async function findFilterTools(): Promise<Pick<NetnsTools, 'iptablesRestore' | 'nsenter'>> {
  return process.getuid?.() === 0 ? findEgressTools() : {};
}

/** Finds what an egress allow-list needs besides; rejects when it cannot be had here. */
export async function findEgressTools(): Promise<Required<Pick<NetnsTools, 'iptablesRestore' | 'nsenter'>>> {
  if (process.getuid?.() !== 0) {
    throw new GenesisError(
      'agent-sandbox-unavailable',
      "agent.network.allow needs Genesis to run as root: it sets a packet filter in the agent's network namespace",
      {
        hint: "run Genesis as root, or remove agent.network.allow (the agent then reaches any host outside, never this host's loopback)",
      },
    );
  }
  const find = async (tool: string, pkg: string) => {
    const path = await resolveOnPath(tool, SEARCH, '/');
    if (path === null)
      throw new GenesisError(
        'agent-sandbox-unavailable',
        `${tool} is not installed, so the agent's network cannot be filtered (agent.network.allow, and this host's own addresses)`,
        { hint: `install ${pkg} (bash scripts/setup-services.sh bwrap does)` },
      );
    return path;
  };
  return { iptablesRestore: await find('iptables-restore', 'iptables'), nsenter: await find('nsenter', 'util-linux') };
}
