import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runProcessTree } from '../../sandbox/process/run-process.js';
import { sandboxPath } from '../environment.js';
import { hostCaBundle, installEnv, type InstallResult, type InstallSpec } from './install-spec.js';

/**
 * For `verify.sandbox: none` only: the install runs as a local process in the work dir, with a
 * private HOME and the minimal environment of every install (nothing of the orchestrator's), but
 * no isolation, like every command of such a world.
 */
export async function installWithoutSandbox(spec: InstallSpec): Promise<InstallResult> {
  const home = await mkdtemp(join(tmpdir(), 'genesis-deps-home-'));
  try {
    const env = { ...installEnv(hostCaBundle()), PATH: process.env.PATH ?? sandboxPath(), HOME: home };
    const { fd3: _unused, ...outcome } = await runProcessTree('/bin/sh', ['-c', spec.command], {
      cwd: resolve(spec.workDir),
      env,
      timeoutMs: spec.timeoutMs,
      maxOutputBytes: spec.maxOutputBytes ?? 256 * 1024,
    });
    return { exitCode: outcome.exitCode, timedOut: outcome.timedOut, output: outcome.output, durationMs: outcome.durationMs };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
