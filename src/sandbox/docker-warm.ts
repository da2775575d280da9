import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { ContainerCreateOptions } from 'dockerode';
import { containerOptions, SANDBOX_CONTAINER_LABEL, waitForExit } from './docker-container.js';
import { dockerError } from './docker-errors.js';
import { readFrames } from './docker-frames.js';
import { OutputTail } from './output-tail.js';
import { planReadOnlyMounts } from './read-only-paths.js';
import type { SandboxRunResult, SandboxRunSpec } from './sandbox.js';
import { mountTree, SLOT_MARKER, unmountSlot, type SlotPaths, type TreeMount } from './warm-mounts.js';
import type { WarmPool, WarmSlot } from './warm-pool.js';
import type { SandboxUser } from './work-dir.js';

/** Where the container reads its command from (a FIFO of its slot, read-only). */
const COMMAND_PATH = '/.genesis-command';
/** Exit code and message of a container that found its slot empty: nothing was mounted, nothing ran. */
const NOT_MOUNTED_EXIT = 199;
const NOT_MOUNTED = 'genesis-warm: the work dir was not mounted';
/** Commands longer than this go through a fresh container (a FIFO's buffer takes 64 KiB without a reader draining it). */
const MAX_COMMAND_BYTES = 32 * 1024;

/**
 * The first process of a pooled container: reads the command from the FIFO (blocking until a
 * gate writes it), enters /work again (the gate's tree is mounted over it meanwhile), refuses an
 * empty slot, then becomes `/bin/sh -c <command>`: the command's shell is PID 1, as in a fresh
 * container. Plain sh, no other program, so any image with /bin/sh can be pooled.
 */
const LAUNCHER = [
  // Lines joined with newlines between them: the command as written, less trailing newlines.
  'c=; n=; while IFS= read -r l || [ -n "$l" ]; do c="$c$n$l"; n=\'',
  `'; done < ${COMMAND_PATH}`,
  `cd /work || exit ${NOT_MOUNTED_EXIT}`,
  `if [ -e /work/${SLOT_MARKER} ]; then echo '${NOT_MOUNTED}' >&2; exit ${NOT_MOUNTED_EXIT}; fi`,
  'exec /bin/sh -c "$c"',
].join('\n');

/**
 * How a pooled container is made for a slot: the settings a fresh gate container gets (no network,
 * read-only root, limits, user, environment: containerOptions), with the slot's work dir bound as
 * a mount slave at /work and its FIFO at COMMAND_PATH instead of the gate's own binds.
 */
export function warmContainerOptions(
  spec: SandboxRunSpec,
  imageId: string,
  user: SandboxUser,
  labels: Record<string, string>,
  paths: Pick<SlotPaths, 'work' | 'command'>,
): ContainerCreateOptions {
  const cold = containerOptions({ ...spec, command: '', mounts: [], readOnlyPaths: [] }, imageId, paths.work, user);
  return {
    ...cold,
    Cmd: ['/bin/sh', '-c', LAUNCHER],
    Labels: { ...cold.Labels, [SANDBOX_CONTAINER_LABEL]: 'warm', ...labels },
    HostConfig: {
      ...cold.HostConfig,
      Binds: [],
      Mounts: [
        { Type: 'bind', Source: paths.work, Target: '/work', BindOptions: { Propagation: 'rslave' } },
        { Type: 'bind', Source: paths.command, Target: COMMAND_PATH, ReadOnly: true },
      ],
    },
  };
}

/**
 * Runs `spec` in a container of the pool, or resolves null when it cannot (no ready container,
 * a command too long, a mount target through a symlink, a slot that does not work here): then
 * nothing ran and the caller makes a fresh container as before. The gate's tree is mounted into
 * the slot (its read-only paths and dependency mounts with it), the command written to the FIFO,
 * and after the exit everything is unmounted before this resolves; the container and its slot
 * are then removed in the background, never used again.
 */
export async function runWarm(
  pool: WarmPool,
  spec: SandboxRunSpec,
  image: { name: string; id: string },
  workDir: string,
  user: SandboxUser,
  /** The tree still has to be handed to `user` (prepareWorkDir's chown): done by the mount script. */
  handOver = false,
): Promise<SandboxRunResult | null> {
  if (!pool.usable || Buffer.byteLength(spec.command) > MAX_COMMAND_BYTES) return null;
  const mounts = treeMounts(spec, workDir);
  if (!(await targetsAreDirect(workDir, mounts))) return null;
  const recipe = (paths: SlotPaths) => warmContainerOptions(spec, image.id, user, pool.labels, paths);
  const key = JSON.stringify(recipe({ dir: '', work: '<work>', stage: '', command: '<command>' }));
  const slot = pool.take(key, recipe);
  if (!slot) return null;
  let stream: Readable | undefined;
  try {
    try {
      // A chown that failed: the caller's own hand-over, on the fresh path, says why.
      if ((await mountTree(slot.paths, workDir, mounts, handOver ? user : undefined)) === 'hand-over-failed') return null;
    } catch {
      pool.disable(); // no mount rights here: every later run goes the fresh way
      return null;
    }
    const tail = new OutputTail(spec.maxOutputBytes);
    try {
      stream = (await slot.container.attach({ stream: true, stdout: true, stderr: true })) as unknown as Readable;
    } catch {
      return null; // the container is gone (a daemon restart): nothing ran
    }
    const drained = readFrames(stream, (chunk) => tail.push(chunk));
    const started = performance.now();
    if (!(await sendCommand(slot, spec.command))) return null;
    let exit: Awaited<ReturnType<typeof waitForExit>>;
    try {
      exit = await waitForExit(slot.container, drained, spec.timeoutMs);
    } catch (cause) {
      throw dockerError(cause, 'run', image.name);
    }
    if (exit.exitCode === NOT_MOUNTED_EXIT && tail.text().includes(NOT_MOUNTED)) {
      pool.disable(); // the daemon does not see this process's mounts (another mount namespace)
      return null;
    }
    return {
      ...exit,
      output: tail.text(),
      outputBytes: tail.totalBytes,
      truncated: tail.truncated,
      durationMs: Math.round(performance.now() - started),
      image,
    };
  } finally {
    stream?.destroy();
    await unmountSlot(slot.paths);
    pool.release(slot);
  }
}

/** The dependency sets and the read-only paths (their pinned parents first), parents before children, as docker orders binds. */
function treeMounts(spec: SandboxRunSpec, workDir: string): TreeMount[] {
  const { pinned, readOnly } = planReadOnlyMounts(spec.readOnlyPaths);
  const all: TreeMount[] = [
    ...(spec.mounts ?? []).map((m) => ({ source: m.source, target: posix.normalize(m.target).replace(/\/+$/, ''), readOnly: true })),
    ...pinned.map((dir) => ({ source: `${workDir}/${dir}`, target: dir, readOnly: false })),
    ...readOnly.map((path) => ({ source: `${workDir}/${path}`, target: path, readOnly: true })),
  ];
  const depth = (m: TreeMount) => m.target.split('/').length;
  return all
    .map((m, i) => ({ m, i }))
    .sort((a, b) => depth(a.m) - depth(b.m) || a.i - b.i)
    .map(({ m }) => m);
}

/** True when no part of any mount target in the tree is a symlink (mount(8) would follow it out of the tree). */
async function targetsAreDirect(workDir: string, mounts: readonly TreeMount[]): Promise<boolean> {
  for (const mount of mounts) {
    const parts = mount.target.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const info = await lstat(`${workDir}/${parts.slice(0, i).join('/')}`).catch(() => null);
      if (!info || info.isSymbolicLink()) return false;
    }
  }
  return true;
}

/**
 * Writes the command into the slot's FIFO once the container's first process has it open (a
 * non-blocking open fails with ENXIO until then). False when it never does: the container died
 * (a daemon restarted since it was made) or does not get there within 5 s.
 */
async function sendCommand(slot: WarmSlot, command: string): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  for (let attempt = 1; ; attempt++) {
    if (attempt % 20 === 0 && !(await isRunning(slot))) return false;
    try {
      const fifo = await open(slot.paths.command, constants.O_WRONLY | constants.O_NONBLOCK);
      try {
        await fifo.write(command);
      } finally {
        await fifo.close();
      }
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

async function isRunning(slot: WarmSlot): Promise<boolean> {
  return slot.container.inspect().then(
    (info) => info.State.Running,
    () => false,
  );
}
