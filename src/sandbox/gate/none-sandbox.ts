import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import { prepareMountPoints } from './mount-points.js';
import { runProcessTree } from '../process/run-process.js';
import type { Sandbox, SandboxKind, SandboxRunResult, SandboxRunSpec } from '../sandbox.js';

/** What the CLI prints when a world runs its commands with `verify.sandbox: none`. */
export const NONE_SANDBOX_WARNING =
  'verify.sandbox is "none": build and test commands run on this machine as your user, with your ' +
  'network, your files and no resource limits. Use it only for worlds whose code you trust.';

/**
 * No isolation: the command runs as a local process in `workDir`, as the user running Genesis.
 * For explicit opt-in only (machines with neither Docker nor bubblewrap, or debugging a gate).
 * What it still keeps of the contract: a fresh environment with a private HOME (the orchestrator's
 * environment, with its API keys, is not passed on), and at the timeout the whole process group
 * is killed. No network cut, no read-only root, no limits, and root stays root.
 */
export class NoneSandbox implements Sandbox {
  readonly kind: SandboxKind = 'none';
  /** The warning to show the user; see {@link NONE_SANDBOX_WARNING}. */
  readonly warning = NONE_SANDBOX_WARNING;

  async check(): Promise<void> {}

  async run(spec: SandboxRunSpec): Promise<SandboxRunResult> {
    // No mounts without isolation: the sources are linked in, and nothing keeps them read-only.
    if (spec.mounts?.length) await prepareMountPoints(spec.workDir, spec.mounts, true);
    const home = await mkdtemp(join(tmpdir(), 'genesis-home-'));
    try {
      const path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
      const env = { PATH: path, LANG: 'C.UTF-8', ...spec.env, HOME: home };
      const { fd3: _unused, ...outcome } = await runProcessTree('/bin/sh', ['-c', spec.command], {
        cwd: resolve(spec.workDir),
        env,
        timeoutMs: spec.timeoutMs,
        maxOutputBytes: spec.maxOutputBytes,
        ...(spec.signal ? { signal: spec.signal } : {}),
      });
      return { ...outcome, oomKilled: false };
    } catch (cause) {
      throw new GenesisError('sandbox-spawn-failed', `Could not start /bin/sh in ${spec.workDir}.`, { cause });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }
}
