import type { Container, ContainerCreateOptions, MountSettings } from 'dockerode';
import { planReadOnlyMounts } from '../read-only-paths.js';
import type { SandboxRunSpec } from '../../sandbox.js';
import type { SandboxUser } from '../work-dir.js';

/** Label on every container Genesis starts, so leftovers can be found (`docker ps -a --filter`). */
export const SANDBOX_CONTAINER_LABEL = 'genesis.sandbox';

/**
 * Waits for a started container to exit, killing it at `timeoutMs` or when `signal` is aborted
 * (then exit code 137), and for its attach stream to end (`drained`), at most 2 s more.
 */
export async function waitForExit(
  container: Container,
  drained: Promise<void>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ exitCode: number; timedOut: boolean; oomKilled: boolean; stopped?: boolean }> {
  let timedOut = false;
  let stopped = false;
  const kill = () => container.kill().catch(() => undefined); // it may have exited in the meantime
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, timeoutMs);
  const stop = () => {
    stopped = true;
    void kill();
  };
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  let status: { StatusCode: number };
  try {
    status = (await container.wait()) as { StatusCode: number };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
  // The attach stream ends just after the container; don't let a stuck one hang the run.
  await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  const state = (await container.inspect()).State;
  return { exitCode: timedOut || stopped ? 137 : status.StatusCode, timedOut, oomKilled: state.OOMKilled, ...(stopped ? { stopped } : {}) };
}

/**
 * How a gate's container is made: no network, read-only root, private /tmp, all capabilities
 * dropped, no-new-privileges, memory (without swap), pids and CPU limits from the spec, the work
 * dir bound read-write at /work, dependency mounts and read-only paths over it.
 */
export function containerOptions(spec: SandboxRunSpec, image: string, workDir: string, user: SandboxUser): ContainerCreateOptions {
  const env = { ...spec.env, HOME: '/tmp' };
  const cpus = Math.max(0.01, spec.limits.cpus);
  const memory = Math.floor(spec.limits.memoryMb * 1024 * 1024);
  return {
    Image: image,
    Cmd: ['/bin/sh', '-c', spec.command],
    WorkingDir: '/work',
    User: `${user.uid}:${user.gid}`,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: { [SANDBOX_CONTAINER_LABEL]: 'docker' },
    Hostname: 'sandbox',
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${Math.min(256, spec.limits.diskMb ?? 256)}m` },
      Binds: [`${workDir}:/work:rw`, ...(spec.mounts ?? []).map((m) => `${m.source}:/work/${m.target}:ro`)],
      // Docker mounts parents before children, so these land on the work dir (see SandboxRunSpec).
      Mounts: readOnlyMounts(workDir, spec.readOnlyPaths),
      Memory: memory,
      MemorySwap: memory,
      PidsLimit: spec.limits.pids,
      CpuPeriod: 100_000,
      CpuQuota: Math.round(cpus * 100_000),
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Ulimits: [{ Name: 'core', Soft: 0, Hard: 0 }],
      // We read the output from the attach stream; a log driver would also write it all to disk.
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}

/** Pinned directories bound over themselves, then the read-only paths, as typed mounts (any name is safe). */
function readOnlyMounts(workDir: string, paths: string[] | undefined): MountSettings[] {
  const { pinned, readOnly } = planReadOnlyMounts(paths);
  const bind = (path: string, ReadOnly: boolean): MountSettings => ({ Type: 'bind', Source: `${workDir}/${path}`, Target: `/work/${path}`, ReadOnly });
  return [...pinned.map((dir) => bind(dir, false)), ...readOnly.map((path) => bind(path, true))];
}
