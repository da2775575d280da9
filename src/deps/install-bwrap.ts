import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SYSTEM_DIRS, underSystemDirs } from '../agents/agent-sandbox-binary.js';
import { GenesisError } from '../errors.js';
import { runProcessTree } from '../sandbox/run-process.js';
import { isolatedUserFor, prepareWorkDir } from '../sandbox/work-dir.js';
import { sandboxPath } from './deps-environment.js';
import { hostCaBundle, installEnv, type InstallResult, type InstallSpec } from './install-spec.js';

/**
 * Runs an install under bubblewrap on an empty root: the system dirs (/usr, /etc, the /bin and
 * /lib links) read-only, the Node running Genesis when it lives outside /usr, a private /tmp, and
 * the work dir (bound at /work, as in the gate, so tools that write absolute paths agree) as the
 * only writable place. No /root, /home, /run (the Docker socket), /var or any world. It runs as a
 * user of its own with no capabilities, under rlimits and a timeout. The network is the host's:
 * bubblewrap cannot give a process a network of its own without a helper (use docker for that).
 */
export async function installWithBwrap(spec: InstallSpec): Promise<InstallResult> {
  const { path, user } = await prepareWorkDir(spec.workDir, isolatedUserFor(spec.workDir));
  const asRoot = process.getuid?.() === 0;
  const env = { ...installEnv(hostCaBundle()), HOME: '/tmp', PATH: sandboxPath() };
  const data = Math.max(1, spec.memoryMb) * 1024 * 1024;
  const args = [
    ...['prlimit', `--data=${data}`, '--core=0', ...(asRoot ? ['--nproc=1024'] : []), '--'],
    'bwrap',
    ...(await systemArgs()),
    ...['--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp'],
    ...['--bind', path, '/work', '--chdir', '/work'],
    ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'deps', '--die-with-parent', '--new-session', '--clearenv'],
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    ...(asRoot ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'] : []),
    ...['/bin/sh', '-c', spec.command],
  ];
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
  }
}

let cachedSystemArgs: Promise<string[]> | undefined;

/** The system dirs as they are on the host (a symlink stays a symlink), plus an outside Node's prefix. */
function systemArgs(): Promise<string[]> {
  cachedSystemArgs ??= (async () => {
    const args: string[] = [];
    for (const dir of SYSTEM_DIRS) {
      const info = await lstat(dir).catch(() => null);
      if (!info) continue;
      if (info.isSymbolicLink()) args.push('--symlink', await readlink(dir), dir);
      else args.push('--ro-bind', dir, dir);
    }
    const prefix = dirname(dirname(await realpath(process.execPath)));
    if (prefix !== '/' && !underSystemDirs(prefix)) args.push('--ro-bind', prefix, prefix);
    return args;
  })();
  return cachedSystemArgs;
}
