import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import Docker from 'dockerode';
import type { Container, ContainerCreateOptions, ImageInspectInfo, MountSettings } from 'dockerode';
import { GenesisError } from '../errors.js';
import { dockerError } from './docker-errors.js';
import { confineDisk, isDiskFull } from './disk-quota.js';
import { readFrames } from './docker-frames.js';
import { OutputTail } from './output-tail.js';
import { prepareMountPoints } from './mount-points.js';
import type { Sandbox, SandboxKind, SandboxRunResult, SandboxRunSpec } from './sandbox.js';
import { planReadOnlyMounts } from './read-only-paths.js';
import { prepareWorkDir } from './work-dir.js';
import type { SandboxUser } from './work-dir.js';

/** Label on every container Genesis starts, so leftovers can be found (`docker ps -a --filter`). */
export const SANDBOX_CONTAINER_LABEL = 'genesis.sandbox';
/**
 * Image label of the skeleton images older versions of sandboxes/node/build.sh made: a root
 * filesystem that needs the host's /usr. A gate refuses them (the host's toolchain would judge the
 * change, so two hosts could judge it differently); agent sandboxes may still use them.
 */
export const BIND_HOST_USR_LABEL = 'genesis.bind-host-usr';

export interface DockerSandboxOptions {
  /** Image for runs whose spec names none, e.g. `genesis/node:20`. */
  image: string;
  /** Client to use. @default new Docker() (DOCKER_HOST, else /var/run/docker.sock) */
  docker?: Docker;
}


/**
 * Runs each command in a fresh container: no network, read-only root, private /tmp, all
 * capabilities dropped, no-new-privileges, memory (without swap), pids and CPU limits from the
 * spec, and the work dir bound read-write at /work. The container is removed after every run,
 * whatever happened; at the timeout it is killed (exit code 137).
 */
export class DockerSandbox implements Sandbox {
  readonly kind: SandboxKind = 'docker';
  private readonly docker: Docker;
  private readonly image: string;

  constructor(options: DockerSandboxOptions) {
    this.docker = options.docker ?? new Docker();
    this.image = options.image;
  }

  async check(): Promise<void> {
    try {
      // dockerode takes an abort signal here though its types don't say so; a hung daemon must
      // not hang the probe.
      type Ping = (options: { abortSignal: AbortSignal }) => Promise<unknown>;
      const ping = this.docker.ping.bind(this.docker) as unknown as Ping;
      await ping({ abortSignal: AbortSignal.timeout(5_000) });
    } catch (cause) {
      throw dockerError(cause, 'run', this.image);
    }
    refuseHostToolchain(this.image, await this.inspectImage(this.image));
  }

  /** The default image's content id and what its `genesis.toolchain` label says it carries. */
  async describeImage(): Promise<{ id: string; toolchain: string | null }> {
    const info = await this.inspectImage(this.image);
    return { id: info.Id, toolchain: info.Config?.Labels?.['genesis.toolchain'] ?? null };
  }

  async run(spec: SandboxRunSpec): Promise<SandboxRunResult> {
    const image = spec.image ?? this.image;
    const info = await this.inspectImage(image);
    refuseHostToolchain(image, info);
    if (spec.limits.diskMb !== undefined) await confineDisk(spec.workDir, spec.limits.diskMb);
    if (spec.mounts?.length) await prepareMountPoints(spec.workDir, spec.mounts);
    const { path, user } = await prepareWorkDir(spec.workDir);
    const tail = new OutputTail(spec.maxOutputBytes);
    const started = performance.now();
    let container: Container | undefined;
    let stream: Readable | undefined;
    try {
      container = await this.docker.createContainer(containerOptions(spec, image, path, user)).catch((cause: unknown) => {
        throw dockerError(cause, 'create', image);
      });
      stream = (await container.attach({ stream: true, stdout: true, stderr: true })) as unknown as Readable;
      const drained = readFrames(stream, (chunk) => tail.push(chunk));
      await container.start();
      let timedOut = false;
      const running = container;
      const timer = setTimeout(() => {
        timedOut = true;
        running.kill().catch(() => undefined); // it may have exited in the meantime
      }, spec.timeoutMs);
      let status: { StatusCode: number };
      try {
        status = (await container.wait()) as { StatusCode: number };
      } finally {
        clearTimeout(timer);
      }
      // The attach stream ends just after the container; don't let a stuck one hang the run.
      await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      const state = (await container.inspect()).State;
      return {
        exitCode: timedOut ? 137 : status.StatusCode,
        timedOut,
        oomKilled: state.OOMKilled,
        output: tail.text(),
        outputBytes: tail.totalBytes,
        truncated: tail.truncated,
        durationMs: Math.round(performance.now() - started),
        image: { name: image, id: info.Id },
        ...(spec.limits.diskMb !== undefined ? { diskFull: await isDiskFull(path) } : {}),
      };
    } catch (cause) {
      throw dockerError(cause, 'run', image);
    } finally {
      stream?.destroy();
      await container?.remove({ force: true }).catch(() => undefined);
    }
  }

  private async inspectImage(image: string): Promise<ImageInspectInfo> {
    try {
      return await this.docker.getImage(image).inspect();
    } catch (cause) {
      throw dockerError(cause, 'image', image);
    }
  }
}

function containerOptions(
  spec: SandboxRunSpec,
  image: string,
  workDir: string,
  user: SandboxUser,
): ContainerCreateOptions {
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

/** A gate runs only in an image that carries its own toolchain: the same programs judge on every host. */
function refuseHostToolchain(image: string, info: ImageInspectInfo): void {
  if (info.Config?.Labels?.[BIND_HOST_USR_LABEL] !== '1') return;
  throw new GenesisError('sandbox-image-host-toolchain', `The sandbox image ${image} is a skeleton that would run the host's /usr: a gate must judge with a toolchain of its own.`, {
    hint: 'Rebuild it with its own toolchain: `bash sandboxes/build-images.sh --force` (or name another image in verify.image).',
  });
}
