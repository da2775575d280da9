import { execFile } from 'node:child_process';
import { access, mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isIPv6 } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The chain in this host's filter table that judges what agents' networks send to this host. */
const CHAIN = 'GENESIS-AGENT-NET';
/** The cgroup (v2) every agent network's slirp4netns runs in, under the cgroup2 mount. */
const GROUP = 'genesis-agent-net';

/**
 * The guard of this host's own addresses against agents. An agent's connections leave its
 * namespace through slirp4netns, which opens them as ordinary sockets of this host: a packet filter
 * inside the namespace can only hold a list of this host's addresses taken at launch, and misses one
 * the host gains later. So slirp4netns runs in a cgroup of its own, and this host's OUTPUT chain
 * sends every packet of a socket in that cgroup to a chain that rejects it when its destination is,
 * at the moment it is sent, an address of this host (`-m addrtype --dst-type LOCAL`). The rules
 * match only that cgroup: nothing else on the host is filtered. The same chain is in both families'
 * tables (iptables and ip6tables), so this host's IPv6 addresses (`::1`, one it gains later) are
 * refused at send time as its IPv4 ones are, should an agent's network ever carry IPv6 (slirp4netns
 * is started without it, so today an agent has no IPv6 route at all).
 *
 * DNS to a resolver on this host's loopback (systemd-resolved's 127.0.0.53) stays open: slirp4netns
 * forwards the agent's lookups there, and the namespace's own loopback is not the host's.
 */
export interface HostAddressGuard {
  /** The cgroup directory the launcher moves slirp4netns into. */
  readonly cgroupDir: string;
  /** The address families whose packets the guard judges: IPv4 always, IPv6 where ip6tables has the matches. */
  readonly families: readonly Family[];
  /**
   * A cgroup of its own for one launch whose agent may reach `accept` (a model endpoint on one of
   * this host's addresses, one TCP port each): the hole is made for it alone and closed by `close`.
   */
  openHoles(accept: readonly { host: string; port: number }[], name: string): Promise<{ cgroupDir: string; close(): Promise<void> }>;
}

let installed: Promise<HostAddressGuard | null> | undefined;

/**
 * The guard, set up once per process (the chain rewritten whole, the jump added when missing), or
 * null where it cannot be had: not root, no cgroup v2 hierarchy, an iptables without the cgroup or
 * addrtype match. Then an agent's namespace keeps only the filter of the addresses of its launch.
 */
export function hostAddressGuard(iptablesRestore: string): Promise<HostAddressGuard | null> {
  installed ??= install(iptablesRestore).catch(() => null);
  return installed;
}

async function install(iptablesRestore: string): Promise<HostAddressGuard | null> {
  if (process.getuid?.() !== 0) return null;
  const mount = await cgroup2Mount();
  if (mount === null) return null;
  const cgroupDir = join(mount.dir, GROUP);
  await mkdir(cgroupDir, { recursive: true });
  await removeStaleLaunches(cgroupDir);
  // The path iptables names: from the root of the cgroup2 hierarchy, not from where it is mounted.
  const path = join(mount.root, GROUP);
  const tool = (family: Family) => join(dirname(iptablesRestore), family === 'ipv4' ? 'iptables' : 'ip6tables');
  await installFamily('ipv4', iptablesRestore, tool('ipv4'), path);
  // IPv6 where this host can filter it; without it the guard still holds IPv4, and an agent's network has no IPv6 route.
  const ipv6 = await installFamily('ipv6', join(dirname(iptablesRestore), 'ip6tables-restore'), tool('ipv6'), path).then(
    () => true,
    () => false,
  );
  const families: Family[] = ipv6 ? ['ipv4', 'ipv6'] : ['ipv4'];
  return {
    cgroupDir,
    families,
    async openHoles(accept, name) {
      const dir = join(cgroupDir, name);
      await mkdir(dir, { recursive: true });
      const rules = accept
        .filter((e) => families.includes(familyOf(e.host)))
        .map((e) => ({
          family: familyOf(e.host),
          rule: ['OUTPUT', '-m', 'cgroup', '--path', join(path, name), '-d', e.host, '-p', 'tcp', '--dport', String(e.port), '-j', 'ACCEPT'],
        }));
      for (const { family, rule } of rules) await run(tool(family), ['-w', '-I', rule[0]!, '1', ...rule.slice(1)]);
      return {
        cgroupDir: dir,
        async close() {
          for (const { family, rule } of rules) await run(tool(family), ['-w', '-D', ...rule]).catch(() => undefined);
          removeWhenEmpty(dir);
        },
      };
    },
  };
}

export type Family = 'ipv4' | 'ipv6';

function familyOf(host: string): Family {
  return isIPv6(host) ? 'ipv6' : 'ipv4';
}

/** The chain written whole in one family's filter table, and the jump to it from OUTPUT added when missing. */
async function installFamily(family: Family, restoreTool: string, tool: string, path: string): Promise<void> {
  await restore(restoreTool, guardRules(family));
  const jump = ['OUTPUT', '-m', 'cgroup', '--path', path, '-j', CHAIN];
  const present = await run(tool, ['-w', '-C', ...jump]).then(
    () => true,
    () => false,
  );
  if (!present) await run(tool, ['-w', '-I', ...jump.slice(0, 1), '1', ...jump.slice(1)]);
}

/**
 * Removes a launch's cgroup once its slirp4netns has ended (a cgroup holding a process cannot be
 * removed, and the launch is disposed of while it may still be ending): tried for a few seconds,
 * off the caller's path.
 */
function removeWhenEmpty(dir: string, tries = 20): void {
  rmdir(dir).catch(() => {
    if (tries > 1) setTimeout(() => removeWhenEmpty(dir, tries - 1), 250).unref();
  });
}

/**
 * Removes the cgroups of launches that are over (by any process, a crashed one included): a launch's
 * cgroup is named after its private directory, which exists from before the cgroup is made until
 * the launch is disposed of; a cgroup still holding a process is never removed.
 */
async function removeStaleLaunches(cgroupDir: string): Promise<void> {
  const entries = await readdir(cgroupDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const live = await access(join(tmpdir(), entry.name)).then(
      () => true,
      () => false,
    );
    if (!live) await rmdir(join(cgroupDir, entry.name)).catch(() => undefined);
  }
}

/** The chain's rules in one family's table (iptables-restore input); --noflush leaves every other chain as it is. */
function guardRules(family: Family): string {
  const loopback = family === 'ipv4' ? '127.0.0.0/8' : '::1/128';
  return [
    '*filter',
    `:${CHAIN} - [0:0]`,
    `-A ${CHAIN} -d ${loopback} -p udp --dport 53 -j RETURN`,
    `-A ${CHAIN} -d ${loopback} -p tcp --dport 53 -j RETURN`,
    `-A ${CHAIN} -p tcp -m addrtype --dst-type LOCAL -j REJECT --reject-with tcp-reset`,
    `-A ${CHAIN} -m addrtype --dst-type LOCAL -j REJECT`,
    'COMMIT',
    '',
  ].join('\n');
}

async function restore(iptablesRestore: string, rules: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = execFile(iptablesRestore, ['-w', '--noflush'], (error) => (error ? reject(error) : resolve()));
    child.stdin?.end(rules);
  });
}

/** Where the cgroup2 hierarchy is mounted here, and which of its cgroups the mount shows as its root. */
async function cgroup2Mount(): Promise<{ dir: string; root: string } | null> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after?.startsWith('cgroup2 ')) continue;
    const fields = before.split(' ');
    const root = fields[3];
    const dir = fields[4];
    if (root !== undefined && dir !== undefined) return { dir, root };
  }
  return null;
}
