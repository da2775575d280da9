import { bwrapWithSeccomp } from '../../sandbox/gate/bwrap/seccomp.js';
import { lstat, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findFilterTools, findNetnsTools, inNetworkNamespace, netnsResolvConf, type NetnsTools } from '../../sandbox/netns/network-namespace.js';
import { systemDirBinds, underSystemDirs } from '../../sandbox/agent/find-binary.js';
import { GenesisError } from '../../errors/genesis-error.js';
import { runProcessTree } from '../../sandbox/process/run-process.js';
import { leaseIsolatedUser, prepareWorkDir, type SandboxUser } from '../../sandbox/gate/work-dir.js';
import { sandboxPath } from '../environment.js';
import { hostCaBundle, installEnv, type InstallResult, type InstallSpec } from './install-spec.js';

/**
 * Runs an install under bubblewrap on an empty root: the system dirs (/usr, /etc, the /bin and
 * /lib links) read-only, the Node running Genesis when it lives outside /usr, a private /tmp, and
 * the work dir (bound at /work, as in the gate, so tools that write absolute paths agree) as the
 * only writable place. No /root, /home, /run (the Docker socket), /var or any world. It runs as a
 * user of its own (leased for the install) with no capabilities, under rlimits and a timeout. Its network is a namespace of
 * its own joined to the outside by slirp4netns, as a confined agent's is: the registry is reached,
 * this host's loopback services (Redis, the dashboard) and, as root, its own addresses are not.
 */
export async function installWithBwrap(spec: InstallSpec): Promise<InstallResult> {
  const lease = await leaseIsolatedUser(spec.workDir);
  try {
    return await installAs(spec, lease.user);
  } finally {
    lease.release();
  }
}

async function installAs(spec: InstallSpec, as: SandboxUser): Promise<InstallResult> {
  const { path, user } = await prepareWorkDir(spec.workDir, as);
  const asRoot = process.getuid?.() === 0;
  const env = { ...installEnv(hostCaBundle()), HOME: '/tmp', PATH: sandboxPath() };
  const data = Math.max(1, spec.memoryMb) * 1024 * 1024;
  const tools = await networkTools();
  // Private to this install and outside the sandbox's view: the FIFOs of the network's start-up.
  const netDir = await mkdtemp(join(tmpdir(), 'genesis-deps-net-'));
  const resolv = join(netDir, 'resolv.conf');
  await writeFile(resolv, netnsResolvConf());
  const dns = (await lstat('/etc/resolv.conf').catch(() => null))?.isFile() ? ['--ro-bind', resolv, '/etc/resolv.conf'] : [];
  const bwrap = [
    ...bwrapWithSeccomp(),
    ...(await systemArgs()),
    ...dns,
    ...['--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp'],
    ...['--bind', path, '/work', '--chdir', '/work'],
    ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'deps', '--die-with-parent', '--new-session', '--clearenv'],
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    ...(asRoot ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'] : []),
    ...['/bin/sh', '-c', spec.command],
  ];
  const args = [...['prlimit', `--data=${data}`, '--core=0', ...(asRoot ? ['--nproc=1024'] : []), '--'], ...inNetworkNamespace(bwrap, netDir, tools)];
  try {
    const { fd3: _unused, ...outcome } = await runProcessTree(args[0]!, args.slice(1), {
      cwd: path,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
      timeoutMs: spec.timeoutMs,
      maxOutputBytes: spec.maxOutputBytes ?? 256 * 1024,
    });
    return { exitCode: outcome.exitCode, timedOut: outcome.timedOut, output: outcome.output, durationMs: outcome.durationMs };
  } catch (cause) {
    throw new GenesisError('bwrap-unavailable', `bubblewrap cannot run the dependency install: ${(cause as Error).message}`, {
      hint: 'Run `bash scripts/setup-services.sh`; it installs bubblewrap.',
      cause,
    });
  } finally {
    await rm(netDir, { recursive: true, force: true });
  }
}

let cachedTools: Promise<NetnsTools> | undefined;

/** slirp4netns and friends, found once; a machine without them gets the agent sandbox's error and hint. */
function networkTools(): Promise<NetnsTools> {
  cachedTools ??= (async () => ({ ...(await findNetnsTools()), ...(await findFilterTools()) }))();
  cachedTools.catch(() => (cachedTools = undefined));
  return cachedTools;
}

let cachedSystemArgs: Promise<string[]> | undefined;

/** The system dirs as they are on the host, plus the prefix of the Node running Genesis when it lives outside them. */
function systemArgs(): Promise<string[]> {
  cachedSystemArgs ??= (async () => {
    const prefix = dirname(dirname(await realpath(process.execPath)));
    const node = prefix !== '/' && !underSystemDirs(prefix) ? ['--ro-bind', prefix, prefix] : [];
    return [...(await systemDirBinds()), ...node];
  })();
  return cachedSystemArgs;
}
