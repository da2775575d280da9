import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { posix } from 'node:path';
import type { ContainerCreateOptions } from 'dockerode';
import { containerOptions, SANDBOX_CONTAINER_LABEL } from '../gate/docker/container.js';
import { dockerError } from '../gate/docker/errors.js';
import { OutputTail } from '../gate/output-tail.js';
import { planReadOnlyMounts } from '../gate/read-only-paths.js';
import type { SandboxRunResult, SandboxRunSpec } from '../sandbox.js';
import { mountTree, SLOT_MARKER, unmountSlot, type SlotPaths, type TreeMount } from './mounts.js';
import { initEnded, oomKills } from './init.js';
import { WarmOutput } from './output.js';
import { WARM_MODE_LABEL, type WarmPool, type WarmSlot } from './pool.js';
import { cleanForNextGate, stopLeftovers } from './reset.js';
import type { SandboxUser } from '../gate/work-dir.js';
import { isLeasedUid } from '../process/uid-leases.js';

/** Where the container reads its command from (a FIFO of its slot, read-only). */
const COMMAND_PATH = '/.genesis-command';
/** Where the command's output goes (a FIFO of its slot the container may only write, bound read-only so it cannot change that). */
const OUTPUT_PATH = '/.genesis-output';
/** Exit code and message of a container that found its slot empty: nothing was mounted, nothing ran. */
const NOT_MOUNTED_EXIT = 199;
const NOT_MOUNTED = 'genesis-warm: the work dir was not mounted';
/** Commands longer than this go through a fresh container (a FIFO's buffer takes 64 KiB without a reader draining it). */
const MAX_COMMAND_BYTES = 32 * 1024;

/**
 * The launcher's first lines: the status marker (the first line), the gate's user (`uid:gid`, the
 * second) and the command, read from the FIFO (blocking until a gate writes them).
 */
const READ_COMMAND = [
  // Lines joined with newlines between them: the command as written, less trailing newlines.
  'k=; u=; c=; n=; while IFS= read -r l || [ -n "$l" ]; do if [ -z "$k" ]; then k=$l; elif [ -z "$u" ]; then u=$l; else c="$c$n$l"; n=\'',
  `'; fi; done < ${COMMAND_PATH}`,
];
/** Exit code of a reused container told no user it may run a gate as (root, or not a uid): it serves nothing more. */
const NO_GATE_USER_EXIT = 198;
/** Refuses an empty slot: the gate's tree, mounted over /work meanwhile, hides the marker. */
const REFUSE_EMPTY_SLOT = `if [ -e /work/${SLOT_MARKER} ]; then printf '%sunmounted\\n' "$k" > ${OUTPUT_PATH}; echo '${NOT_MOUNTED}' >&2; exit ${NOT_MOUNTED_EXIT}; fi`;

/**
 * The first process of a container used once: reads its command, enters /work again, runs
 * `/bin/sh -c <command>` with its output into the output FIFO, writes `<marker><exit code>` there
 * after it, and exits with the same code: the namespace, and every process the command left,
 * ends with it. Plain sh, no other program, so any image with /bin/sh can be pooled this way.
 */
const ONCE_LAUNCHER = [
  ...READ_COMMAND,
  `cd /work || { printf '%sunmounted\\n' "$k" > ${OUTPUT_PATH}; exit ${NOT_MOUNTED_EXIT}; }`,
  REFUSE_EMPTY_SLOT,
  `/bin/sh -c "$c" > ${OUTPUT_PATH} 2>&1`,
  's=$?',
  `printf '%s%s\\n' "$k" "$s" > ${OUTPUT_PATH}`,
  'exit $s',
].join('\n');

/**
 * The launcher of a container that serves gate after gate (warm-reset.ts): root without
 * capabilities but SETUID, SETGID and SETPCAP, under docker's init. For each command it drops to
 * the user the host sent with it (the uid leased for that gate, so no two live sandboxes share
 * a uid even when one container serves gate after gate; its group as the only supplementary one,
 * as docker sets it) with an empty bounding set, as a fresh gate container has it, and a shell of
 * that user enters /work (the tree may be closed to root without capabilities) and runs the
 * command; then it writes the status, and the host takes away whatever the command left before
 * it sends the next one. A read without a marker (an empty write) is passed over; a user that is
 * root or no number ends the container, so no gate ever runs as root here whatever was sent.
 */
const REUSE_LAUNCHER = [
  'p=/usr/bin/setpriv; [ -x "$p" ] || p=/bin/setpriv',
  'while :; do',
  ...READ_COMMAND,
  '[ -n "$k" ] || continue',
  REFUSE_EMPTY_SLOT,
  `i=\${u%%:*}; g=\${u#*:}`,
  `case "$i$g" in ''|*[!0-9]*) exit ${NO_GATE_USER_EXIT};; esac`,
  `[ -n "$i" ] && [ -n "$g" ] && [ "$i" -gt 0 ] && [ "$g" -gt 0 ] || exit ${NO_GATE_USER_EXIT}`,
  `"$p" --reuid="$i" --regid="$g" --groups="$g" --bounding-set=-all -- /bin/sh -c 'cd /work && exec /bin/sh -c "$1"' genesis-gate "$c" > ${OUTPUT_PATH} 2>&1`,
  's=$?',
  `printf '%s%s\\n' "$k" "$s" > ${OUTPUT_PATH}`,
  'done',
].join('\n');

/** How a pooled container serves gates: each container once, or gate after gate with a reset between. */
export type WarmMode = 'once' | 'reuse';

/**
 * How a pooled container is made for a slot: the settings a fresh gate container gets (no network,
 * read-only root, limits, user, environment: containerOptions), with the slot's work dir bound as
 * a mount slave at /work and its FIFO at COMMAND_PATH instead of the gate's own binds. Used once,
 * the container runs as `user` (a uid the pool leased for that container alone). In reuse mode
 * it runs as root under docker's init with SETUID, SETGID and SETPCAP only, `user` is not part of
 * it (the launcher is told each gate's user with its command); the pids limit counts the init on top.
 */
export function warmContainerOptions(
  spec: SandboxRunSpec,
  imageId: string,
  user: SandboxUser,
  labels: Record<string, string>,
  paths: Pick<SlotPaths, 'work' | 'command' | 'output'>,
  mode: WarmMode = 'once',
): ContainerCreateOptions {
  const reuse = mode === 'reuse';
  const cold = containerOptions({ ...spec, command: '', mounts: [], readOnlyPaths: [] }, imageId, paths.work, reuse ? { uid: 0, gid: 0 } : user);
  return {
    ...cold,
    Cmd: ['/bin/sh', '-c', reuse ? REUSE_LAUNCHER : ONCE_LAUNCHER],
    Labels: { ...cold.Labels, [SANDBOX_CONTAINER_LABEL]: 'warm', [WARM_MODE_LABEL]: mode, ...labels },
    HostConfig: {
      ...cold.HostConfig,
      ...(reuse ? { Init: true, CapAdd: ['SETUID', 'SETGID', 'SETPCAP'], PidsLimit: (cold.HostConfig?.PidsLimit ?? 0) + 1 } : {}),
      Binds: [],
      Mounts: [
        { Type: 'bind', Source: paths.work, Target: '/work', BindOptions: { Propagation: 'rslave' } },
        { Type: 'bind', Source: paths.command, Target: COMMAND_PATH, ReadOnly: true },
        { Type: 'bind', Source: paths.output, Target: OUTPUT_PATH, ReadOnly: true },
      ],
    },
  };
}

/**
 * Runs `spec` in a container of the pool, or resolves null when it cannot (no ready container,
 * a command too long, a mount target through a symlink, a slot that does not work here): then
 * nothing ran and the caller makes a fresh container as before. The gate's tree is mounted into
 * the slot (its read-only paths and dependency mounts with it), the command written to the FIFO,
 * and after the exit everything is unmounted before this resolves. A reused container whose
 * leftover processes were killed goes back to the pool once the rest of its reset (after this
 * resolves) has passed; any other is removed with its slot in the background.
 */
export async function runWarm(
  pool: WarmPool,
  spec: SandboxRunSpec,
  image: { name: string; id: string },
  workDir: string,
  /** The user leased for this gate: a reused container runs the command as it. */
  user: SandboxUser,
  /** The tree still has to be handed to the gate's user (prepareWorkDir's chown): done by the mount script. */
  handOver = false,
): Promise<SandboxRunResult | null> {
  if (!pool.usable || Buffer.byteLength(spec.command) > MAX_COMMAND_BYTES) return null;
  const mounts = treeMounts(spec, workDir);
  if (!(await targetsAreDirect(workDir, mounts))) return null;
  // The key holds no user: a reused container is told each gate's, a one-use one gets a uid of its own from the pool.
  const keyOf = (mode: WarmMode) => {
    const recipe = (paths: SlotPaths, owner: SandboxUser) => warmContainerOptions(spec, image.id, owner, pool.labels, paths, mode);
    const key = JSON.stringify(recipe({ dir: '', work: '<work>', stage: '', command: '<command>', output: '<output>' }, { uid: -1, gid: -1 }));
    return { recipe, key, mode };
  };
  // Reused containers where this host and image allow it (warm-reset.ts) and the gate has a leased uid (what the
  // container's probe assumed of its gates' users), else each used once.
  let { key, recipe, mode } = keyOf('reuse');
  if (pool.refusesReuse(key) || !isLeasedUid(user.uid) || !isLeasedUid(user.gid)) ({ key, recipe, mode } = keyOf('once'));
  const slot = await pool.take(key, recipe, mode);
  if (!slot) return null;
  // A one-use container runs as the uid it was made with: the tree goes to that one.
  const gateUser = slot.user ?? user;
  let output: WarmOutput | undefined;
  let daemon: DaemonWatch | undefined;
  let reusable = false;
  try {
    try {
      // A chown that failed: the caller's own hand-over, on the fresh path, says why.
      if ((await mountTree(slot.paths, workDir, mounts, handOver ? gateUser : undefined)) === 'hand-over-failed') return null;
    } catch {
      pool.disable(); // no mount rights here: every later run goes the fresh way
      return null;
    }
    const tail = new OutputTail(spec.maxOutputBytes);
    const marker = `genesis-status-${randomBytes(16).toString('hex')}:`;
    try {
      output = new WarmOutput(slot.paths.output, Buffer.from(marker), tail);
    } catch {
      return null; // the slot's output FIFO cannot be opened: nothing ran
    }
    const oomBefore = slot.reuse && slot.init ? await oomKills(slot.init) : null;
    const started = performance.now();
    if (!(await sendCommand(slot, `${marker}\n${gateUser.uid}:${gateUser.gid}\n${spec.command}`))) return null;
    daemon = watchDaemonExit(slot, spec.timeoutMs, spec.signal);
    const ended = await endOf(slot, output, daemon, oomBefore).catch((cause: unknown) => {
      throw dockerError(cause, 'run', image.name);
    });
    const durationMs = Math.round(performance.now() - started);
    await output.finish();
    const status = await Promise.race([output.status, Promise.resolve(null)]);
    const exit = await exitOf(slot, ended, status, daemon).catch((cause: unknown) => {
      throw dockerError(cause, 'run', image.name);
    });
    if (ended.by === 'status' && exit !== 'unmounted') pool.stats.seenExits++;
    if (exit === 'unmounted') {
      pool.disable(); // the daemon does not see this process's mounts (another mount namespace)
      return null;
    }
    reusable = ended.by === 'status' && ended.reset;
    if (slot.reuse && ended.by === 'status' && !ended.reset) pool.stats.resetFailures++;
    return { ...exit, output: tail.text(), outputBytes: tail.totalBytes, truncated: tail.truncated, durationMs, image };
  } finally {
    daemon?.stop();
    output?.close();
    await unmountSlot(slot.paths);
    // The rest of the reset is the next gate's, not this one's: it runs after the verdict, the tree unmounted first.
    const reuse = slot.reuse;
    pool.release(slot, reusable && reuse ? () => cleanForNextGate(reuse) : false);
  }
}

type Ended = { by: 'status'; oomKills: number | null; reset: boolean } | { by: 'daemon'; exitCode: number; timedOut: boolean; stopped: boolean };

/**
 * Waits for the command's end: its status in the output FIFO and every other process of the
 * container gone, or the daemon's report of the exit, whichever comes first. A container used
 * once is done when its first process has exited (warm-init.ts); a reused one when the host has
 * killed what the command left (`reset`: it may serve another gate once cleanForNextGate passed),
 * its OOM kills counted from `oomBefore`. The daemon's report comes 50-250 ms later here; it
 * alone covers a timeout, a status that never came, or a container the host cannot watch.
 */
async function endOf(slot: WarmSlot, output: WarmOutput, daemon: DaemonWatch, oomBefore: number | null): Promise<Ended> {
  let settled = false;
  const init = slot.init;
  const reuse = slot.reuse;
  const byStatus = !init
    ? new Promise<never>(() => undefined)
    : reuse
      ? output.status.then(async () => {
          const stopped = await stopLeftovers(reuse);
          const after = await oomKills(init);
          const kills = after !== null && oomBefore !== null ? after - oomBefore : null;
          return { by: 'status' as const, oomKills: kills, reset: stopped && kills !== null };
        })
      : output.status.then(async () => {
          // Counted while the container's cgroup surely exists: the daemon may remove it as soon as the last process ends.
          const early = await oomKills(init);
          while (!settled && !(await initEnded(init))) await new Promise((resolve) => setTimeout(resolve, 1));
          return { by: 'status' as const, oomKills: (await oomKills(init)) ?? early, reset: false };
        });
  const byDaemon = daemon.exited.then((exit) => ({ by: 'daemon' as const, ...exit }));
  try {
    return await Promise.race([byStatus, byDaemon]);
  } finally {
    settled = true;
  }
}

/**
 * The run's exit as a fresh container would report it, or 'unmounted' when the slot was found
 * empty. An exit code of 137 (killed: out of memory, the timeout) and anything the host cannot
 * read itself are taken from the daemon, with its OOMKilled flag, as before the pool read exits.
 */
async function exitOf(
  slot: WarmSlot,
  ended: Ended,
  status: string | null,
  daemon: DaemonWatch,
): Promise<{ exitCode: number; timedOut: boolean; oomKilled: boolean; stopped?: boolean } | 'unmounted'> {
  if (status === 'unmounted') return 'unmounted';
  const code = ended.by === 'status' && status !== null && /^\d{1,3}$/.test(status) ? Number(status) : null;
  // Used once, a 137 may be a kill the counter has not caught up with: the daemon says. A reused container's counter is read after its leftovers were killed.
  const kills = ended.by === 'status' && (code !== 137 || slot.reuse) ? ended.oomKills : null;
  if (code !== null && (kills !== null || slot.reuse)) return { exitCode: code, timedOut: false, oomKilled: (kills ?? 0) > 0 };
  const exit = ended.by === 'daemon' ? ended : await daemon.exited;
  const state = (await slot.container.inspect()).State;
  return {
    exitCode: exit.timedOut || exit.stopped ? 137 : exit.exitCode,
    timedOut: exit.timedOut,
    oomKilled: state.OOMKilled,
    ...(exit.stopped ? { stopped: true } : {}),
  };
}

interface DaemonWatch {
  exited: Promise<{ exitCode: number; timedOut: boolean; stopped: boolean }>;
  stop(): void;
}

/**
 * The daemon's wait for the container's exit, killing it at `timeoutMs` or when `signal` is
 * aborted (then exit code 137).
 * `stop` also ends the wait itself: a reused container does not exit after its run, and a wait
 * left open would keep the process alive until the container went.
 */
function watchDaemonExit(slot: WarmSlot, timeoutMs: number, signal?: AbortSignal): DaemonWatch {
  let timedOut = false;
  let stopped = false;
  const abort = new AbortController();
  const kill = () => slot.container.kill().catch(() => undefined); // it may have exited in the meantime
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, timeoutMs);
  // A gate no longer wanted: killed as at the timeout (the container then serves no further gate).
  const stop = () => {
    stopped = true;
    void kill();
  };
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  const settle = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  };
  const exited = (slot.container.wait({ abortSignal: abort.signal }) as Promise<{ StatusCode: number }>).then(
    (status) => {
      settle();
      return { exitCode: timedOut || stopped ? 137 : status.StatusCode, timedOut, stopped };
    },
    (error: unknown) => {
      settle();
      throw error;
    },
  );
  // Nobody may wait for it (the status came first): its end must not be an unhandled rejection.
  exited.catch(() => undefined);
  return {
    exited,
    stop: () => {
      settle();
      abort.abort();
    },
  };
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
