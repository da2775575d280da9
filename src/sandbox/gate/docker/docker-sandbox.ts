import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import Docker from 'dockerode';
import type { Container, ImageInspectInfo } from 'dockerode';
import { GenesisError } from '../../../errors/genesis-error.js';
import { containerOptions, waitForExit } from './container.js';
import { dockerError } from './errors.js';
import { confineDisk, isDiskFull } from '../../process/disk-quota.js';
import { readFrames } from './frames.js';
import { OutputTail } from '../output-tail.js';
import { prepareMountPoints } from '../mount-points.js';
import type { Sandbox, SandboxKind, SandboxRunResult, SandboxRunSpec } from '../../sandbox.js';
import { runWarm } from '../../warm/warm-sandbox.js';
import type { WarmPool } from '../../warm/pool.js';
import { handOverWorkDir, leaseIsolatedUser, locateWorkDir, type SandboxUser } from '../work-dir.js';

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
  /**
   * Containers started ahead (warm-pool.ts): a run takes one made with its settings when one is
   * ready, else makes its own as without. The pool's client must reach the same daemon. @default none
   */
  warm?: WarmPool;
}

/**
 * Runs each command in a fresh container: no network, read-only root, private /tmp, all
 * capabilities dropped, no-new-privileges, memory (without swap), pids and CPU limits from the
 * spec, the work dir bound read-write at /work, and (as root) a uid leased for the run. The container is removed after every run,
 * whatever happened; at the timeout it is killed (exit code 137).
 */
export class DockerSandbox implements Sandbox {
  readonly kind: SandboxKind = 'docker';
  /** The client its containers run with; shared with code that must reach the same daemon. */
  readonly docker: Docker;
  private readonly image: string;
  private readonly warm: WarmPool | undefined;

  constructor(options: DockerSandboxOptions) {
    this.docker = options.docker ?? new Docker();
    this.image = options.image;
    this.warm = options.warm;
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
    // As root the command runs as a uid leased for this run (no other live sandbox, bwrap or docker, has it):
    // the kernel counts RLIMIT_NPROC, inotify instances and the like per uid, across containers.
    const lease = await leaseIsolatedUser(spec.workDir);
    try {
      const { path, user, handOver } = await locateWorkDir(spec.workDir, lease.user);
      // A pooled run hands the tree to the user in its mount script; otherwise it is done here.
      const warm = this.warm && (await runWarm(this.warm, spec, { name: image, id: info.Id }, path, user, handOver));
      if (warm) return { ...warm, ...(spec.limits.diskMb !== undefined ? { diskFull: await isDiskFull(path) } : {}) };
      if (handOver) await handOverWorkDir(path, user);
      return await this.runFresh(spec, image, info, path, user);
    } finally {
      lease.release();
    }
  }

  /** Runs `spec` in a container of its own as `user`, removed after (see the class). */
  private async runFresh(spec: SandboxRunSpec, image: string, info: ImageInspectInfo, path: string, user: SandboxUser): Promise<SandboxRunResult> {
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
      const exit = await waitForExit(container, drained, spec.timeoutMs, spec.signal);
      return {
        ...exit,
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

/** A gate runs only in an image that carries its own toolchain: the same programs judge on every host. */
function refuseHostToolchain(image: string, info: ImageInspectInfo): void {
  if (info.Config?.Labels?.[BIND_HOST_USR_LABEL] !== '1') return;
  throw new GenesisError(
    'sandbox-image-host-toolchain',
    `The sandbox image ${image} is a skeleton that would run the host's /usr: a gate must judge with a toolchain of its own.`,
    {
      hint: 'Rebuild it with its own toolchain: `bash sandboxes/build-images.sh --force` (or name another image in verify.image).',
    },
  );
}
