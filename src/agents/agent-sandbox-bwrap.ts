import { lstat, mkdir, readlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { execa } from 'execa';
import { GenesisError } from '../errors.js';
import { prepareWorkDir, SANDBOX_GID, SANDBOX_UID } from '../sandbox/work-dir.js';
import { resolveOnPath, SYSTEM_DIRS, underSystemDirs } from './agent-sandbox-binary.js';
import { agentReadOnlyPaths, parentsFirst } from './agent-sandbox-mounts.js';
import type { AgentLaunch, AgentSandbox, AgentSandboxKind, AgentSandboxSpec } from './agent-sandbox.js';

const HINT = 'Run `bash scripts/setup-services.sh bwrap` to install bubblewrap, or set agent.sandbox to docker or none.';

/**
 * Runs the agent under bubblewrap on an empty root: the system dirs (/usr, /etc, the /bin and
 * /lib links) read-only, a private /tmp, /proc and /dev, the paths of `agentReadOnlyPaths`
 * read-only, and only the workspace and its HOME writable. /root, /home, /run (the Docker socket),
 * /var and every other world stay out of sight. Own PID, IPC and UTS namespaces; as root it drops
 * to uid 1000 with no capabilities and no-new-privs.
 *
 * The network is the host's: bubblewrap cannot give a process a network of its own without a
 * helper (slirp4netns, pasta), and the agent must reach its model. So the agent reaches what this
 * machine reaches, host loopback services included; the gate, which has no network at all, stays
 * unreachable. Use `agent.sandbox: docker` for a network of the agent's own.
 */
export class BwrapAgentSandbox implements AgentSandbox {
  readonly kind: AgentSandboxKind = 'bwrap';
  readonly hostBinaries = true;
  private bwrap: string | null = null;

  async check(): Promise<void> {
    this.bwrap ??= await resolveOnPath('bwrap', process.env.PATH, '/');
    if (!this.bwrap) throw new GenesisError('agent-sandbox-unavailable', 'bubblewrap (bwrap) is not installed, so agent.sandbox: bwrap cannot run agents', { hint: HINT });
    const probe = await execa(this.bwrap, [...(await systemArgs()), '--unshare-pid', 'true'], { reject: false, timeout: 10_000 });
    if (probe.exitCode !== 0) {
      throw new GenesisError('agent-sandbox-unavailable', `bubblewrap cannot start an agent sandbox here: ${probe.stderr || probe.stdout || `exit code ${probe.exitCode}`}`.trim(), { hint: HINT });
    }
  }

  async launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch> {
    if (!this.bwrap) await this.check();
    await mkdir(spec.home, { recursive: true });
    const asRoot = process.getuid?.() === 0;
    // As root the agent runs as uid 1000, which must own what it may write.
    if (asRoot) {
      await prepareWorkDir(spec.workspace);
      await prepareWorkDir(spec.home);
    }
    const binds = parentsFirst([
      ...(await agentReadOnlyPaths(argv[0]!, spec)).map((target) => ({ target, args: ['--ro-bind', target, target] })),
      ...[spec.workspace, spec.home].map((target) => ({ target, args: ['--bind', target, target] })),
    ]);
    const drop = asRoot ? ['setpriv', `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_GID}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'] : [];
    const args = [
      ...(await systemArgs()),
      ...mountPointArgs(binds.map((b) => b.target)),
      ...binds.flatMap((b) => b.args),
      ...['--chdir', spec.workspace],
      ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'agent', '--die-with-parent', '--new-session'],
      '--',
      ...drop,
      ...argv,
    ];
    return { file: this.bwrap!, args, env: { ...spec.env, HOME: spec.home }, dispose: async () => undefined };
  }
}

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

let cachedSystemArgs: Promise<string[]> | undefined;

/** The system dirs, kept as they are on the host: a symlink (/bin -> usr/bin) stays a symlink. */
function systemArgs(): Promise<string[]> {
  cachedSystemArgs ??= (async () => {
    const args: string[] = [];
    for (const dir of SYSTEM_DIRS) {
      const info = await lstat(dir).catch(() => null);
      if (!info) continue;
      if (info.isSymbolicLink()) args.push('--symlink', await readlink(dir), dir);
      else args.push('--ro-bind', dir, dir);
    }
    return [...args, '--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp'];
  })();
  return cachedSystemArgs;
}
