import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { Container } from 'dockerode';
import { dockerError } from '../../sandbox/gate/docker/errors.js';
import { readFrames } from '../../sandbox/gate/docker/frames.js';
import { SANDBOX_CONTAINER_LABEL } from '../../sandbox/gate/docker/container.js';
import { OutputTail } from '../../sandbox/gate/output-tail.js';
import { leaseIsolatedUser, prepareWorkDir, type SandboxUser } from '../../sandbox/gate/work-dir.js';
import { hostCaBundle, installEnv, type InstallResult, type InstallSpec } from './install-spec.js';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CA_IN_CONTAINER = '/etc/genesis-ca.crt';

/**
 * Runs an install in a fresh container on Docker's bridge network (a network of its own: not the
 * host's loopback, not the gate's none), with every capability dropped, a read-only root, memory,
 * pids and CPU limits and a timeout; as root it runs as a uid leased for the install (as a gate
 * does: no other live sandbox shares its per-user kernel limits), else as this user. It sees the dependency files at /work, the
 * image's own toolchain (the gate's image, so the set runs where it was built) and this machine's
 * CA bundle, nothing else: no world, no ledger, no Docker socket. `docker` is the gate sandbox's
 * client (dockerClientOf), so the set is installed on the daemon that runs the gates.
 */
export async function installWithDocker(spec: InstallSpec, docker: Docker): Promise<InstallResult> {
  const lease = await leaseIsolatedUser(spec.workDir);
  try {
    return await installAs(spec, docker, await prepareWorkDir(spec.workDir, lease.user));
  } finally {
    // The container is removed (its processes gone) before this runs.
    lease.release();
  }
}

async function installAs(spec: InstallSpec, docker: Docker, { path: workDir, user }: { path: string; user: SandboxUser }): Promise<InstallResult> {
  const info = await docker
    .getImage(spec.image)
    .inspect()
    .catch((cause: unknown) => {
      throw dockerError(cause, 'image', spec.image);
    });
  const bundle = hostCaBundle();
  const path = info.Config?.Env?.find((e) => e.startsWith('PATH='))?.slice(5) ?? DEFAULT_PATH;
  const env = { ...installEnv(bundle ? CA_IN_CONTAINER : null), PATH: path, HOME: '/tmp' };
  const memory = spec.memoryMb * 1024 * 1024;
  const tail = new OutputTail(spec.maxOutputBytes ?? 256 * 1024);
  const started = performance.now();
  let container: Container | undefined;
  let stream: Readable | undefined;
  try {
    container = await docker.createContainer({
      Image: spec.image,
      Cmd: ['/bin/sh', '-c', spec.command],
      WorkingDir: '/work',
      User: `${user.uid}:${user.gid}`,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Labels: { [SANDBOX_CONTAINER_LABEL]: 'deps' },
      Hostname: 'deps',
      AttachStdout: true,
      AttachStderr: true,
      HostConfig: {
        NetworkMode: 'bridge',
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=2g' },
        Binds: [...(bundle ? [`${bundle}:${CA_IN_CONTAINER}:ro`] : []), `${workDir}:/work:rw`],
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: 1024,
        CpuPeriod: 100_000,
        CpuQuota: 200_000,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        LogConfig: { Type: 'none', Config: {} },
        // Removed by the daemon when it exits, even when the process that started it died.
        AutoRemove: true,
      },
    });
    stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as unknown as Readable;
    const drained = readFrames(stream, (chunk) => tail.push(chunk));
    // Waiting from before the start: an auto-removed container may be gone by the time a later wait asks.
    const exited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
    await container.start();
    let timedOut = false;
    const running = container;
    const timer = setTimeout(() => {
      timedOut = true;
      running.kill().catch(() => undefined);
    }, spec.timeoutMs);
    let status: { StatusCode: number };
    try {
      status = await exited;
    } finally {
      clearTimeout(timer);
    }
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    return { exitCode: timedOut ? 137 : status.StatusCode, timedOut, output: tail.text(), durationMs: Math.round(performance.now() - started) };
  } catch (cause) {
    throw dockerError(
      cause,
      container ? 'run' : 'create',
      spec.image,
      'Run `bash scripts/setup-services.sh`; dockerd must run with its default (bridge) networking for installs.',
    );
  } finally {
    stream?.destroy();
    await container?.remove({ force: true }).catch(() => undefined);
  }
}
