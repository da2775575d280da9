import { bwrapWithSeccomp } from '../gate/bwrap/seccomp.js';
import { rmSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { GenesisError } from '../../errors/genesis-error.js';
import { leaseIsolatedUser, prepareWorkDir, type SandboxUser } from '../gate/work-dir.js';
import { resolveOnPath, systemDirBinds, underSystemDirs } from './find-binary.js';
import { agentReadOnlyPaths, parentsFirst } from './mounts.js';
import { confineAgentDisk } from './workspace-quota.js';
import { homeFileBinds } from './home-files.js';
import { writeAgentAccounts } from './accounts.js';
import { findEgressTools, findFilterTools, findNetnsTools, hostNetworks, inNetworkNamespace, type NetnsTools } from '../netns/network-namespace.js';
import type { AgentNetnsPool } from '../netns/pool.js';
import { agentNetwork, type AgentNetwork } from '../netns/join-netns.js';
import type { AgentLaunch, AgentSandbox, AgentSandboxKind, AgentSandboxSpec } from '../agent-sandbox.js';
import type { AgentEndpoint } from '../egress/endpoints.js';

const HINT = 'Run `bash scripts/setup-services.sh bwrap` to install bubblewrap, or set agent.sandbox to docker or none.';
const NET_HINT = 'Run `bash scripts/setup-services.sh bwrap` (it installs slirp4netns); where namespaces cannot be made, set agent.sandbox to docker or none.';

/**
 * Runs the agent under bubblewrap on an empty root: the system dirs (/usr, /etc, the /bin and
 * /lib links) read-only, a private /tmp, /proc and /dev, the paths of `agentReadOnlyPaths`
 * read-only, and only the workspace and its HOME writable. /root, /home, /run (the Docker socket),
 * /var and every other world stay out of sight. Own PID, IPC and UTS namespaces (the last two come
 * with a pooled network namespace, see agent-netns-slot.ts); as root it drops to a uid of its own
 * (leased for the launch, as a gate's is: agents running at once share no per-user limit), named
 * `agent` in the host's /etc/passwd and /etc/group seen with one line added, with no capabilities
 * and no-new-privs.
 *
 * The network is a namespace of the agent's own, joined to the outside by slirp4netns with the
 * host's loopback cut off (see agent-netns.ts): the agent reaches its model and what this machine
 * reaches outside, not Redis, the dashboard or anything else on this host's 127.0.0.1, and not the
 * gate, which has no network at all. Its /etc/resolv.conf names slirp4netns's DNS forwarder.
 */
export class BwrapAgentSandbox implements AgentSandbox {
  readonly kind: AgentSandboxKind = 'bwrap';
  readonly hostBinaries = true;
  private bwrap: string | null = null;
  private tools: NetnsTools | null = null;

  /**
   * @param allow the egress allow-list (`agent.network.allow`); without it the network is open.
   * @param pool network namespaces made ahead (root, no allow-list); without it each launch makes its own.
   * @param reach the model endpoints the agent reaches whatever else is closed, or `host`: no
   *   network namespace at all (`agent.network: { mode: host }`, acknowledged in world.yaml).
   */
  constructor(
    private readonly allow?: readonly string[],
    private readonly pool?: AgentNetnsPool,
    private readonly reach: { endpoints?: readonly AgentEndpoint[]; hostNetwork?: boolean } = {},
  ) {}

  async check(): Promise<void> {
    this.bwrap ??= await resolveOnPath('bwrap', process.env.PATH, '/');
    if (!this.bwrap)
      throw new GenesisError('agent-sandbox-unavailable', 'bubblewrap (bwrap) is not installed, so agent.sandbox: bwrap cannot run agents', { hint: HINT });
    const probe = await execa(this.bwrap, [...(await systemArgs()), '--unshare-pid', 'true'], { reject: false, timeout: 10_000 });
    if (probe.exitCode !== 0) {
      throw new GenesisError(
        'agent-sandbox-unavailable',
        `bubblewrap cannot start an agent sandbox here: ${probe.stderr || probe.stdout || `exit code ${probe.exitCode}`}`.trim(),
        { hint: HINT },
      );
    }
    if (this.reach.hostNetwork) {
      this.tools = { unshare: '', slirp4netns: '', setpriv: '' };
      return;
    }
    this.tools = { ...(await findNetnsTools()), ...(this.allow ? await findEgressTools() : await findFilterTools()) };
    const dir = await mkdtemp(join(tmpdir(), 'genesis-agent-net-'));
    try {
      const [file, ...args] = inNetworkNamespace([this.bwrap, ...(await systemArgs()), '--unshare-pid', 'true'], dir, this.tools);
      const net = await execa(file!, args, { reject: false, timeout: 10_000 });
      if (net.exitCode !== 0) {
        throw new GenesisError(
          'agent-sandbox-unavailable',
          `an agent cannot get a network namespace of its own here: ${net.stderr || net.stdout || `exit code ${net.exitCode}`}`.trim(),
          { hint: NET_HINT },
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Checked: the first agent need not wait for its namespace (one only: a worker's start is busy enough).
    if (this.pool && !this.allow && this.tools.iptablesRestore) void this.pool.fill(hostNetworks(), 1);
  }

  async launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch> {
    if (!this.bwrap || !this.tools) await this.check();
    await mkdir(spec.home, { recursive: true });
    const quota = await confineAgentDisk(spec);
    const homeFiles = await homeFileBinds(spec.homeFiles, spec.home);
    const asRoot = process.getuid?.() === 0;
    // As root the agent runs as a uid of its own for the launch (no other live sandbox has it), which must own what it may write.
    const lease = asRoot ? await leaseIsolatedUser(spec.workspace) : null;
    // The network is made while the rest is prepared; given back if the rest fails.
    const network = this.reach.hostNetwork
      ? Promise.resolve(HOST_NETWORK)
      : agentNetwork(this.tools!, this.allow, this.pool, this.reach.endpoints, spec.modelPort);
    network.catch(() => undefined);
    let readOnly: string[];
    let accounts: { args: string[]; dir: string } | undefined;
    try {
      [readOnly, , accounts] = await Promise.all([
        agentReadOnlyPaths(argv, spec),
        lease ? Promise.all([prepareWorkDir(spec.workspace, lease.user), prepareWorkDir(spec.home, lease.user)]) : undefined,
        lease ? accountBinds(lease.user, spec.home) : undefined,
      ]);
    } catch (error) {
      await (await network.catch(() => null))?.dispose();
      lease?.release();
      if (accounts) rmSync(accounts.dir, { recursive: true, force: true });
      throw error;
    }
    const net = await network;
    const binds = parentsFirst([
      ...readOnly.map((target) => ({ target, args: ['--ro-bind', target, target] })),
      ...[spec.workspace, spec.home].map((target) => ({ target, args: ['--bind', target, target] })),
      ...homeFiles.map((b) => ({ target: b.target, args: ['--ro-bind', b.source, b.target] })),
    ]);
    const dns = net.resolvConf && (await lstat('/etc/resolv.conf').catch(() => null))?.isFile() ? ['--ro-bind', net.resolvConf, '/etc/resolv.conf'] : [];
    const drop = lease
      ? ['setpriv', `--reuid=${lease.user.uid}`, `--regid=${lease.user.gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all']
      : [];
    const args = [
      ...(await systemArgs()),
      ...dns,
      ...(accounts?.args ?? []),
      // A second, bounded /tmp over the first, so the quota has no way around it.
      ...(spec.diskMb === undefined ? [] : ['--perms', '1777', '--size', String(spec.diskMb * 1024 * 1024), '--tmpfs', '/tmp']),
      ...mountPointArgs(binds.map((b) => b.target)),
      ...binds.flatMap((b) => b.args),
      ...['--chdir', spec.workspace],
      ...['--unshare-pid', ...net.bwrapNamespaces, '--die-with-parent', '--new-session'],
      '--',
      ...drop,
      ...argv,
    ];
    const [file, ...wrapped] = net.wrap([...bwrapWithSeccomp(this.bwrap!), ...args]);
    return {
      file: file!,
      args: wrapped,
      env: { ...spec.env, ...net.env, HOME: spec.home },
      dispose: async () => {
        try {
          await net.dispose();
        } finally {
          lease?.release();
          // Not rmSync: a launch ends while other episodes' work waits on this process's one thread.
          if (accounts) await rm(accounts.dir, { recursive: true, force: true });
        }
      },
      ...quota,
      ...(net.egressRefused ? { egressRefused: net.egressRefused } : {}),
      ...(net.endpointFailures ? { endpointFailures: net.endpointFailures } : {}),
    };
  }
}

/** The host's own network (acknowledged `agent.network: { mode: host }`): no namespace, the host's resolver. */
const HOST_NETWORK: AgentNetwork = {
  bwrapNamespaces: ['--unshare-ipc', '--unshare-uts', '--hostname', 'agent'],
  resolvConf: '',
  wrap: (argv) => [...argv],
  env: {},
  dispose: async () => undefined,
};

/**
 * `--dir` for every directory on the way to a bind target: bubblewrap would create them itself,
 * but with the mode of nothing (0700, root's), and uid 1000 could not reach its own workspace.
 */
function mountPointArgs(targets: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const target of targets) {
    for (let dir = dirname(target); dir !== '/' && dir !== '/tmp' && !underSystemDirs(dir); dir = dirname(dir)) dirs.add(dir);
  }
  return [...dirs].sort((a, b) => a.split('/').length - b.split('/').length).flatMap((dir) => ['--perms', '0755', '--dir', dir]);
}

/** The system dirs as the host has them, and the sandbox's own /proc, /dev and /tmp. */
async function systemArgs(): Promise<string[]> {
  return [...(await systemDirBinds()), '--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp'];
}

/** The host's /etc/passwd and /etc/group with the agent's own user added, bound over the host's. */
async function accountBinds(user: SandboxUser, home: string): Promise<{ args: string[]; dir: string }> {
  const accounts = await writeAgentAccounts(user, home, (name) => readFile(`/etc/${name}`, 'utf8').catch(() => null));
  return { args: accounts.files.flatMap((f) => ['--ro-bind', f.path, `/etc/${f.name}`]), dir: accounts.dir };
}
