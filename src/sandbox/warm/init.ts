import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupsOf } from '../process/cgroups.js';

/**
 * The first process of a pooled container as the host sees it, so a run can tell that every
 * process of the container has ended without waiting for the Docker daemon to report the exit
 * (the daemon reports an exit well after the last process ended; bench/RESULTS.md has how long).
 *
 * When the first process of a PID namespace exits, the kernel kills every other process in the
 * namespace and waits until they are gone before the first one becomes a zombie; so once it is
 * a zombie, or gone, nothing of the container runs any more and the gate's tree can be unmounted.
 */
export interface WarmInit {
  /** Its process id on the host. */
  pid: number;
  /** Its start time (field 22 of /proc/<pid>/stat): a pid reused by another process has another. */
  start: string;
  /** The container's memory cgroup file that counts OOM kills (`oom_kill N`), or null when not found. */
  oomFile: string | null;
}

/** What the host knows of a container's first process, or null when it cannot be read (then runs wait for the daemon). */
export async function describeInit(pid: number): Promise<WarmInit | null> {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const stat = await readStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return null;
  return { pid, start: stat.start, oomFile: await oomFileOf(pid) };
}

/** True once the process has exited (a zombie, reaped, or its pid now another process's). */
export async function initEnded(init: WarmInit): Promise<boolean> {
  const stat = await readStat(init.pid);
  return !stat || stat.start !== init.start || stat.state === 'Z' || stat.state === 'X';
}

/** OOM kills in the container's memory cgroup so far, or null when the count cannot be read (the cgroup is gone). */
export async function oomKills(init: WarmInit): Promise<number | null> {
  if (!init.oomFile) return null;
  const text = await readFile(init.oomFile, 'utf8').catch(() => null);
  const count = text === null ? null : /^oom_kill (\d+)$/m.exec(text)?.[1];
  return count === undefined || count === null ? null : Number(count);
}

async function readStat(pid: number): Promise<{ state: string; start: string } | null> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (text === null) return null;
  // The command name is in parentheses and may hold spaces or parentheses itself: fields follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state && start ? { state, start } : null;
}

/** cgroup v1: `<the memory controller's directory>/memory.oom_control`; v2: `<unified directory>/memory.events`. */
async function oomFileOf(pid: number): Promise<string | null> {
  const cgroups = await cgroupsOf(pid);
  if (cgroups.v1Controllers.has('memory')) return cgroups.v1.memory ? join(cgroups.v1.memory, 'memory.oom_control') : null;
  return cgroups.unified ? join(cgroups.unified, 'memory.events') : null;
}
