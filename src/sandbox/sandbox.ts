import type Docker from 'dockerode';
import { GenesisError } from '../errors/genesis-error.js';

/**
 * The Sandbox port: run one shell command against a host directory, isolated from the network
 * and from everything on the host that the command has no business touching.
 *
 * Contract every adapter keeps:
 * - `command` runs as `/bin/sh -c command` with its working directory at the mounted `workDir`
 *   (seen inside as `/work` where the adapter can remap it); `workDir` is the only writable place
 *   besides a private `/tmp`, and what the command writes there stays in `workDir` after the run
 *   (setup, build and test share one work dir across runs).
 * - No network at all: not the host's loopback, not the outside, no DNS. (`none` is the exception
 *   and says so when created.)
 * - Never root: the command runs as an unprivileged user that owns `workDir` for the run.
 * - `limits` are enforced where the adapter can (docker: all three; bwrap: by rlimits).
 * - The whole process tree dies at `timeoutMs`; the result then has `timedOut: true`. It dies
 *   too when `signal` is aborted; the result then has `stopped: true`.
 * - `run` resolves with a result for every outcome of the command (failing, killed, timed out);
 *   it rejects only when the sandbox itself cannot be used (no daemon, no image), with a
 *   GenesisError whose hint says how to fix the machine.
 */
export type SandboxKind = 'docker' | 'bwrap' | 'none';

export interface SandboxLimits {
  /** CPUs the command may use (fractions allowed). */
  cpus: number;
  /** Memory limit in MiB; a command over it is killed. */
  memoryMb: number;
  /** Maximum number of processes/threads. */
  pids: number;
  /**
   * Disk quota of the work dir in MiB (a size-limited tmpfs, see disk-quota.ts); unlimited when
   * absent. Filling it sets `diskFull` on the result.
   */
  diskMb?: number;
}

export interface SandboxRunSpec {
  /** Shell command, run with /bin/sh -c. */
  command: string;
  /** Host directory mounted read-write as the working directory. */
  workDir: string;
  timeoutMs: number;
  limits: SandboxLimits;
  /** Extra environment; HOME is always a private temporary directory. */
  env?: Record<string, string>;
  /** Docker image to run in (docker adapter only). */
  image?: string;
  /** How many bytes of combined output to keep (the tail). @default 65536 */
  maxOutputBytes?: number;
  /**
   * Aborting it kills the command's whole process tree, as the timeout does; the result then has
   * `stopped: true` (a gate whose verdict is no longer wanted, see stoppableSandbox).
   */
  signal?: AbortSignal;
  /**
   * Host paths the command sees read-only inside its work dir, without copying: each `source`
   * appears at `target` (relative to the work dir, e.g. `node_modules/vitest`). docker and bwrap
   * bind them read-only; `none` links them (not read-only there). Prepared dependency sets
   * arrive this way. @default []
   */
  mounts?: readonly SandboxMount[];
  /**
   * Paths relative to `workDir` (files or directories) the command may not change: each is
   * mounted read-only over itself, and every directory between it and `workDir` is pinned (a
   * mount point cannot be renamed or removed, so the path cannot be swapped for another).
   * docker and bwrap enforce it; `none` cannot and ignores it. Symlinks are not followed: pass
   * only regular files and directories. @default []
   */
  readOnlyPaths?: string[];
}

/** A read-only view of a host path inside the work dir (see {@link SandboxRunSpec.mounts}). */
export interface SandboxMount {
  /** Absolute host path (a file or a directory). */
  source: string;
  /** Where it appears, relative to the work dir; its parents are created as directories. */
  target: string;
}

export interface SandboxRunResult {
  /** Exit code of the command; 137 when killed (timeout, out of memory). */
  exitCode: number;
  timedOut: boolean;
  oomKilled: boolean;
  /** Combined stdout and stderr, the last `maxOutputBytes` bytes. */
  output: string;
  /** Bytes of output the command produced in all, kept or not. */
  outputBytes: number;
  truncated: boolean;
  durationMs: number;
  /** The image the command ran in, by name and by content id (docker adapter only). */
  image?: SandboxImage;
  /** The work dir's disk quota was full when the command ended (only with `limits.diskMb`). */
  diskFull?: boolean;
  /** Killed because `signal` was aborted (exit code 137). */
  stopped?: boolean;
}

/** An image as a gate records it: the name it was asked for and the id it resolved to then. */
export interface SandboxImage {
  name: string;
  /** Docker's image id (`sha256:…`), which names the exact content. */
  id: string;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /**
   * The client a docker sandbox runs its containers with (docker only; see dockerClientOf). Code
   * that must reach the same daemon, such as the dependency installer, takes it from here instead
   * of making a client of its own; a wrapping sandbox passes its inner one on.
   */
  readonly docker?: Docker;
  /** Resolves when the sandbox can run commands; rejects with a GenesisError and a hint if not. */
  check(): Promise<void>;
  run(spec: SandboxRunSpec): Promise<SandboxRunResult>;
}

/** The Docker client of a docker sandbox; a docker sandbox without one is a wrapper that dropped it. */
export function dockerClientOf(sandbox: Sandbox): Docker {
  if (sandbox.docker) return sandbox.docker;
  throw new GenesisError('sandbox-client-missing', `a ${sandbox.kind} sandbox has no Docker client to share`, {
    hint: 'a sandbox that wraps a docker sandbox must pass its `docker` client on (see recordImage in src/gate/image.ts)',
  });
}
