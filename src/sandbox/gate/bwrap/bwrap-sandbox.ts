import { bwrapWithSeccomp } from './seccomp.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenesisError } from '../../../errors/genesis-error.js';
import { backoffDelay, backoffPolicy } from '../../../retry/backoff-policy.js';
import { confineDisk, isDiskFull } from '../../process/disk-quota.js';
import { minimalRootArgs, SANDBOX_WORK_DIR } from './root.js';
import { planReadOnlyMounts } from '../read-only-paths.js';
import { runProcessTree } from '../../process/run-process.js';
import type { ProcessTreeOutcome } from '../../process/run-process.js';
import { prepareMountPoints } from '../mount-points.js';
import type { Sandbox, SandboxKind, SandboxMount, SandboxRunResult, SandboxRunSpec } from '../../sandbox.js';
import { leaseIsolatedUser, prepareWorkDir, SANDBOX_UID } from '../work-dir.js';
import type { SandboxUser } from '../work-dir.js';

const MOUNT_RACE = /Can't bind mount \/oldroot|Unable to apply mount flags|Unable to remount/;
/** A raced mount is tried again soon, four times at most: the mount table settles in milliseconds. */
const MOUNT_RACE_BACKOFF = backoffPolicy({ initialMs: 50, maxMs: 400, jitter: 0.5, maxRetries: 4 });
const SHORT_OF = new Set(['EAGAIN', 'ENOMEM', 'EMFILE', 'ENFILE']);
const SETUP_HINT = 'Run `bash scripts/setup-services.sh`; it installs bubblewrap and says what blocks it.';
const REACH_HINT = `The sandbox runs as uid ${SANDBOX_UID}: make every parent directory searchable by it ` + '(or keep work dirs under /tmp or /var/tmp):';

/**
 * Runs commands under bubblewrap on a minimal root of its own (minimalRootArgs: the image's
 * skeleton, the host's /usr read-only, a synthetic /etc/passwd, the work dir at /work, nothing of
 * the host's state), private /tmp, no network (a new network namespace, which also cuts abstract
 * Unix sockets), own PID, IPC and UTS namespaces. As root, bwrap itself runs as root (so it can
 * bind a work dir under a private directory such as /root) and the command drops to a user of its
 * own (leaseIsolatedUser: no two live sandboxes share one) inside with `setpriv`: no capabilities, an empty
 * bounding set and no-new-privs. bwrap's own `--uid` in a user namespace would still write files
 * as root.
 *
 * Limits are rlimits, set with `prlimit` around bwrap, and are weaker than docker's cgroups:
 * - memory: RLIMIT_DATA per process (RLIMIT_AS would stop Node at start: V8 reserves gigabytes
 *   of address space); a tree of n processes may use n times the limit; `oomKilled` stays false,
 *   the command sees failed allocations instead.
 * - pids: RLIMIT_NPROC, only when dropping privileges as root; the kernel counts every process of
 *   that uid on the host, which is why each run gets a uid of its own. Not set for a non-root
 *   orchestrator, whose own processes would count against it.
 * - cpus: not enforced.
 */
export class BwrapSandbox implements Sandbox {
  readonly kind: SandboxKind = 'bwrap';

  /** Resolves when bubblewrap can start a sandbox here; rejects with `bwrap-unavailable` if not. */
  async check(): Promise<void> {
    const workDir = await mkdtemp(join(tmpdir(), 'genesis-bwrap-check-'));
    try {
      const result = await this.run({
        command: 'true',
        workDir,
        timeoutMs: 10_000,
        limits: { cpus: 1, memoryMb: 256, pids: 64 },
      });
      if (result.exitCode !== 0) throw new Error(result.output.trim() || `exit code ${result.exitCode}`);
    } catch (cause) {
      if (cause instanceof GenesisError && cause.code === 'bwrap-unavailable') throw cause;
      throw unavailable(cause);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async run(spec: SandboxRunSpec): Promise<SandboxRunResult> {
    if (spec.limits.diskMb !== undefined) await confineDisk(spec.workDir, spec.limits.diskMb);
    if (spec.mounts?.length) await prepareMountPoints(spec.workDir, spec.mounts);
    // Held until the run's processes are gone (its PID namespace ends with bwrap): no other sandbox gets this uid meanwhile.
    const lease = await leaseIsolatedUser(spec.workDir);
    try {
      return await this.runAs(spec, lease.user);
    } finally {
      lease.release();
    }
  }

  private async runAs(spec: SandboxRunSpec, as: SandboxUser): Promise<SandboxRunResult> {
    const { path, user } = await prepareWorkDir(spec.workDir, as);
    const asRoot = process.getuid?.() === 0;
    // The first shell reports on fd 3 that the sandbox is up, closes it and becomes the command's
    // shell; bwrap's own --json-status-fd reports the child before its mounts, too early to tell
    // bwrap's failures from the command's.
    const started = 'printf started >&3 && exec 3>&- && exec /bin/sh -c "$0"';
    const [file = 'bwrap', ...args] = [
      ...limitArgs(spec, asRoot),
      ...[
        ...bwrapWithSeccomp(),
        ...(await minimalRootArgs(path, user, spec.limits.diskMb)),
        ...readOnlyArgs(path, spec.readOnlyPaths),
        ...mountArgs(spec.mounts ?? []),
        ...bwrapArgs(spec.env),
      ],
      ...dropArgs(user, asRoot),
      ...['/bin/sh', '-c', started, spec.command],
    ];
    let outcome: ProcessTreeOutcome;
    for (let attempt = 1; ; attempt++) {
      try {
        outcome = await runProcessTree(file, args, {
          cwd: path,
          env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
          timeoutMs: spec.timeoutMs,
          maxOutputBytes: spec.maxOutputBytes,
          captureFd3: true,
          ...(spec.signal ? { signal: spec.signal } : {}),
        });
      } catch (cause) {
        // Out of processes or memory for a moment is an outage of the machine, not a bwrap that cannot work here.
        if (SHORT_OF.has(String((cause as NodeJS.ErrnoException).code)))
          throw new GenesisError('bwrap-failed', `bubblewrap could not start: ${(cause as Error).message}`, {
            hint: 'the machine is short of processes or memory; the episode is tried again',
            cause,
          });
        throw unavailable(cause);
      }
      // A bind copies every mount below its source; one that vanishes meanwhile (a container
      // Docker is creating or removing) makes bwrap fail before the command starts. Try again.
      const raced = !outcome.timedOut && !outcome.stopped && outcome.fd3 !== 'started' && MOUNT_RACE.test(outcome.output);
      const wait = raced ? backoffDelay(MOUNT_RACE_BACKOFF, attempt, Math.random()) : null;
      if (wait === null) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    // Without the report the failure is bwrap's (a mount source out of reach, no user
    // namespaces), not the command's; unless it was killed first (the timeout, or stopped).
    if (!outcome.timedOut && !outcome.stopped && outcome.fd3 !== 'started') {
      const reason = outcome.output.trim() || `bwrap exited with ${outcome.exitCode}`;
      if (MOUNT_RACE.test(outcome.output))
        throw new GenesisError('bwrap-failed', `bubblewrap raced a changing mount table ${MOUNT_RACE_BACKOFF.maxRetries + 1} times: ${reason}`, {
          hint: 'mounts appeared or vanished under it (containers starting); the episode is tried again',
        });
      const denied = asRoot && reason.includes('Permission denied');
      throw unavailable(new Error(reason), denied ? `${REACH_HINT} ${path}` : SETUP_HINT);
    }
    const { fd3: _status, ...result } = outcome;
    return { ...result, oomKilled: false, ...(spec.limits.diskMb !== undefined ? { diskFull: await isDiskFull(path) } : {}) };
  }
}

function unavailable(cause: unknown, hint = SETUP_HINT): GenesisError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new GenesisError('bwrap-unavailable', `bubblewrap cannot run a sandbox here: ${reason}`, {
    hint,
    cause,
  });
}

/** prlimit, which execs bwrap with the rlimits the command inherits. */
function limitArgs(spec: SandboxRunSpec, asRoot: boolean): string[] {
  const data = Math.max(1, Math.floor(spec.limits.memoryMb)) * 1024 * 1024;
  return ['prlimit', `--data=${data}`, '--core=0', ...(asRoot ? [`--nproc=${spec.limits.pids}`] : []), '--'];
}

/** Inside the sandbox, as root: become the sandbox user with no way back to privileges. */
function dropArgs(user: SandboxUser, asRoot: boolean): string[] {
  if (!asRoot) return [];
  return ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'];
}

/**
 * Protected paths read-only over themselves, after the work dir is bound: the directories above
 * them pinned first (bound over themselves), so none can be renamed or removed.
 */
function readOnlyArgs(workDir: string, paths: string[] | undefined): string[] {
  const { pinned, readOnly } = planReadOnlyMounts(paths);
  return [
    ...pinned.flatMap((dir) => ['--bind', `${workDir}/${dir}`, `${SANDBOX_WORK_DIR}/${dir}`]),
    ...readOnly.flatMap((path) => ['--ro-bind', `${workDir}/${path}`, `${SANDBOX_WORK_DIR}/${path}`]),
  ];
}

/** Dependency sets, read-only at their place under the work dir (their mount points exist: prepareMountPoints). */
function mountArgs(mounts: readonly SandboxMount[]): string[] {
  return mounts.flatMap((m) => ['--ro-bind', m.source, `${SANDBOX_WORK_DIR}/${m.target}`]);
}

/** Namespaces and environment; the filesystem is minimalRootArgs'. */
function bwrapArgs(env: Record<string, string> | undefined): string[] {
  const setenv = Object.entries({ ...env, HOME: '/tmp' }).flatMap(([k, v]) => ['--setenv', k, v]);
  return [
    ...['--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'sandbox'],
    ...['--die-with-parent', '--new-session'],
    ...setenv,
  ];
}
