import { constants } from 'node:fs';
import { access, lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { readMountinfo } from '../process/mountinfo.js';
import { cgroupsOf } from '../process/cgroups.js';
import { isLeasedUid } from '../process/uid-leases.js';
import { runChecked } from '../../spawn/spawner.js';

/**
 * What the host needs to hand a pooled container to another gate (warm-pool.ts, reuse mode):
 * its two processes that outlive a gate, the cgroups that let the host stop and count every
 * other process, and the writable places a gate could leave something in.
 *
 * A reused container runs docker's init (tini: it reaps every orphan) and under it the launcher,
 * both as root without capabilities beyond SETUID, SETGID and SETPCAP; each gate's command runs under the
 * sandbox user (setpriv), so a gate can neither signal nor trace the two (another uid, and the
 * kernel ignores signals to a namespace's first process from inside it). Between gates the host
 * freezes the container's cgroup, kills every process but those two, thaws it and waits until
 * the pids controller counts only them; then it empties every writable tmpfs and mqueue mount
 * of the container and removes every System V IPC object of its IPC namespace. A gate cannot
 * mount (no CAP_SYS_ADMIN), change the hostname or the network, and its root is read-only, so
 * nothing else of it outlives its processes but what the kernel keeps of its sockets: a TCP
 * connection in TIME_WAIT (a minute, on the port a later gate's test may want), the counters of
 * the loopback and of each protocol. The host cannot give a container a new network namespace,
 * so one whose network namespace is not as it was made (any socket table entry or counter moved:
 * the gate used its network) serves no further gate.
 */
export interface ReuseState {
  /** docker-init (PID 1 in the container) and the launcher, as host pids with their start times. */
  keep: ReadonlyArray<{ pid: number; start: string }>;
  /** The launcher's host pid: the container's namespaces and root are read through it. */
  launcher: number;
  /** The container's cgroup directories (cgroup v1: freezer and pids controllers; v2: one directory for both). */
  freezer: string;
  pids: string;
  version: 1 | 2;
  /** Writable mounts (paths inside the container) whose contents are removed after each gate. */
  wipe: string[];
  /** Gates served so far. */
  uses: number;
  /** The network namespace's socket tables and counters as the container was made (networkFingerprint). */
  network: string;
}

/** Why a started container cannot be reused, or its state. */
export type ReuseProbe = { ok: true; state: ReuseState } | { ok: false; reason: string };

/** Mount types a gate may write in that the host knows how to empty. */
const WIPED_TYPES = new Set(['tmpfs', 'mqueue']);

/**
 * Reads a started reuse-mode container through its first process: finds the launcher (its only
 * child), the cgroups and the mounts a gate could write in. Which uid a gate runs as is only
 * known when it comes (each is leased for its gate, never root: the launcher refuses root), so
 * a mount counts as writable when any leased uid could write in it (writableByGate). Refuses
 * (the pool then uses each container once) when the image has no setpriv, a cgroup cannot be
 * found, or a gate could write somewhere the host does not know how to empty.
 */
export async function probeReuse(initPid: number, workTarget: string): Promise<ReuseProbe> {
  const init = await procStat(initPid);
  if (!init) return { ok: false, reason: 'the first process is gone' };
  const cgroup = await cgroupDirs(initPid);
  if (!cgroup) return { ok: false, reason: 'the container cgroup cannot be read' };
  const launcher = await waitForOnlyChild(cgroup, initPid);
  if (!launcher) return { ok: false, reason: 'the launcher did not start' };
  const root = `/proc/${launcher.pid}/root`;
  const executable = (path: string) =>
    access(`${root}${path}`, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (!(await executable('/usr/bin/setpriv')) && !(await executable('/bin/setpriv'))) return { ok: false, reason: 'the image has no setpriv' };
  const wipe: string[] = [];
  const mounts = await writableMounts(launcher.pid);
  const points = new Set(mounts.map((m) => m.point));
  for (const mount of mounts) {
    if (mount.point === workTarget || mount.point.startsWith(`${workTarget}/`)) continue;
    const info = await lstat(`${root}${mount.point}`).catch(() => null);
    if (!info) return { ok: false, reason: `writable mount ${mount.point} cannot be read` };
    const writable = writableByGate(info);
    if (writable && info.isDirectory() && WIPED_TYPES.has(mount.type)) wipe.push(mount.point);
    else if (writable && (info.isDirectory() || info.isFile())) return { ok: false, reason: `a gate could write in ${mount.point} (${mount.type})` };
    else if (info.isDirectory() && mount.type === 'tmpfs') {
      // A tmpfs the gate cannot write at its root (/dev): nor in a directory below it that is no mount of its own.
      for (const name of await readdir(`${root}${mount.point}`).catch(() => [] as string[])) {
        const point = `${mount.point === '/' ? '' : mount.point}/${name}`;
        const child = await lstat(`${root}${point}`).catch(() => null);
        if (child?.isDirectory() && !points.has(point) && writableByGate(child)) return { ok: false, reason: `a gate could write in ${point}` };
      }
    }
  }
  const network = await networkFingerprint(launcher.pid);
  if (network === null) return { ok: false, reason: "the container's network namespace cannot be read" };
  return { ok: true, state: { keep: [{ pid: initPid, start: init.start }, launcher], launcher: launcher.pid, ...cgroup, wipe, uses: 0, network } };
}

/**
 * Whether some gate may create entries in (or write) what `info` describes, by its mode bits:
 * a gate runs as a uid of the lease range (its gid the same), so it is the owner or in the group
 * only of what such a uid owns, and else one of the others.
 */
function writableByGate(info: Stats): boolean {
  if (isLeasedUid(info.uid) && (info.mode & 0o200) !== 0) return true;
  if (isLeasedUid(info.gid) && (info.mode & 0o020) !== 0) return true;
  return (info.mode & 0o002) !== 0;
}

/**
 * The first half of taking away what the last gate left (see ReuseState): every process it left
 * is killed, before its verdict is read, so nothing of the gate still runs while its tree and
 * report are read or unmounted. Resolves false when the container cannot be trusted for another
 * gate (a process that would not die, its launcher gone): the caller removes it then.
 */
export async function stopLeftovers(state: ReuseState): Promise<boolean> {
  state.uses++;
  if (!(await killAllBut(state))) return false;
  for (const kept of state.keep) {
    const now = await procStat(kept.pid);
    if (!now || now.start !== kept.start || now.state === 'Z') return false;
  }
  return true;
}

/**
 * The second half, after stopLeftovers and once the gate's tree is unmounted: what the gate wrote
 * in the container's own writable mounts and its System V IPC go, and its network namespace must be
 * as it was made. Only the next gate needs it, so it runs after the verdict, while the container
 * waits outside the ready set (WarmPool.release). Resolves false when the container must not serve
 * another gate.
 */
export async function cleanForNextGate(state: ReuseState): Promise<boolean> {
  const root = `/proc/${state.launcher}/root`;
  const [ipc] = await Promise.all([
    runChecked('nsenter', ['--target', String(state.launcher), '--ipc', '--', 'ipcrm', '--all'], TOOL_ENV).then(
      () => true,
      () => false,
    ),
    ...state.wipe.map((dir) => emptyDir(`${root}${dir}`)),
  ]);
  if (!ipc) return false;
  for (const dir of state.wipe) if ((await readdir(`${root}${dir}`).catch(() => ['?'])).length > 0) return false;
  // Read after the kill: a socket of a process just killed is closed by then (its TIME_WAIT, if any, stays and is seen).
  return (await networkFingerprint(state.launcher)) === state.network;
}

/**
 * What a gate's sockets leave in a network namespace, as /proc/<pid>/net shows it for that
 * process's namespace: every socket table (a TIME_WAIT stays in `tcp` after its process died) and
 * every counter (the loopback's bytes, each protocol's opens and segments: a gate could also count
 * a message into them). Null when it cannot be read.
 */
export async function networkFingerprint(pid: number): Promise<string | null> {
  const parts = await Promise.all(
    NETWORK_FILES.map((name) =>
      readFile(`/proc/${pid}/net/${name}`, 'utf8').then(
        (text) => `${name}\n${text}`,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? `${name} absent\n` : null),
      ),
    ),
  );
  return parts.includes(null) ? null : parts.join('');
}

const NETWORK_FILES = ['tcp', 'tcp6', 'udp', 'udp6', 'udplite', 'udplite6', 'raw', 'raw6', 'icmp', 'icmp6', 'unix', 'dev', 'snmp', 'snmp6', 'netstat'];

/** Freezes the cgroup, kills every process in it but the kept ones, thaws it; repeats until only those are counted. */
async function killAllBut(state: ReuseState): Promise<boolean> {
  const kept = new Set(state.keep.map((k) => k.pid));
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const [procs, current] = await Promise.all([listProcs(state.pids), readFile(join(state.pids, 'pids.current'), 'utf8').catch(() => '')]);
    const others = procs.filter((pid) => !kept.has(pid));
    // pids.current also counts processes that died but were not reaped yet: tini reaps them in a moment.
    if (others.length === 0 && Number(current) === kept.size) return true;
    if (others.length > 0) {
      // Frozen, nothing forks between the listing and the kill; a kill lands when the cgroup thaws.
      if (!(await freeze(state, true))) return false;
      for (const pid of await listProcs(state.pids)) if (!kept.has(pid)) killQuietly(pid);
      if (!(await freeze(state, false))) return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return false;
}

async function freeze(state: ReuseState, frozen: boolean): Promise<boolean> {
  const file = state.version === 1 ? join(state.freezer, 'freezer.state') : join(state.freezer, 'cgroup.freeze');
  const value = state.version === 1 ? (frozen ? 'FROZEN' : 'THAWED') : frozen ? '1' : '0';
  try {
    await writeFile(file, value);
    if (!frozen) return true;
    for (let i = 0; i < 2_000; i++) {
      const now =
        state.version === 1
          ? (await readFile(file, 'utf8')).trim()
          : /^frozen 1$/m.test(await readFile(join(state.freezer, 'cgroup.events'), 'utf8'))
            ? '1'
            : '0';
      if (now === value) return true;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  } catch {
    return false;
  }
  await writeFile(file, state.version === 1 ? 'THAWED' : '0').catch(() => undefined);
  return false;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // It ended meanwhile.
  }
}

async function listProcs(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** Removes what is in `dir`, never `dir` itself (a mount point): links are removed, never followed. */
async function emptyDir(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.map((name) => rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined)));
}

/** The first process's only child in its cgroup: the launcher (it may take a moment to be forked). */
async function waitForOnlyChild(cgroup: { pids: string }, parent: number): Promise<{ pid: number; start: string } | null> {
  // Docker's start returns once init runs; its fork of the launcher follows at once, but a loaded machine may delay it.
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    for (const pid of await listProcs(cgroup.pids)) {
      const info = await procStat(pid);
      if (info && info.ppid === parent && info.state !== 'Z') return { pid, start: info.start };
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return null;
}

async function procStat(pid: number): Promise<{ state: string; ppid: number; start: string } | null> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (text === null) return null;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, start] = [fields[0], Number(fields[1]), fields[19]];
  return state && start ? { state, ppid, start } : null;
}

/** The container's freezer and pids cgroup directories, through its first process. */
async function cgroupDirs(pid: number): Promise<Pick<ReuseState, 'freezer' | 'pids' | 'version'> | null> {
  const cgroups = await cgroupsOf(pid);
  const { freezer, pids } = cgroups.v1;
  if (freezer && pids) return { freezer, pids, version: 1 };
  if (!cgroups.v1Controllers.has('freezer') && cgroups.unified) return { freezer: cgroups.unified, pids: cgroups.unified, version: 2 };
  return null;
}

/** Mounts of the launcher's mount namespace that are writable (mount point, type). */
async function writableMounts(pid: number): Promise<Array<{ point: string; type: string }>> {
  return (await readMountinfo(pid)).filter((m) => m.options.includes('rw') && m.superOptions.includes('rw')).map((m) => ({ point: m.point, type: m.fstype }));
}

const TOOL_ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' };
