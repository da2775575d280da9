import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readMountinfo } from './mountinfo.js';

/**
 * Where a process's cgroups are in this process's view of the file systems: one directory per
 * controller on a cgroup v1 hierarchy, and the cgroup v2 (unified) directory. The warm pool reads
 * a container's OOM kills, freezes it and counts its processes through these.
 */
export interface ProcessCgroups {
  /** Directories by v1 controller (`memory`, `freezer`, `pids`...), for those whose hierarchy is mounted here. */
  v1: Record<string, string>;
  /** Controllers the process is in on a v1 hierarchy, mounted here or not: those are not on the unified one. */
  v1Controllers: Set<string>;
  unified: string | null;
}

export async function cgroupsOf(pid: number): Promise<ProcessCgroups> {
  const [cgroups, mounts] = await Promise.all([readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => ''), readMountinfo()]);
  // Lines of /proc/<pid>/cgroup: `id:controllers:path` (v1), `0::path` (v2); a path may hold colons.
  const lines = cgroups
    .split('\n')
    .map((l) => l.split(':'))
    .filter((l) => l.length >= 3);
  const v1Lines = lines.filter((l) => l[1] !== '');
  const v2Path = lines
    .find((l) => l[0] === '0' && l[1] === '')
    ?.slice(2)
    .join(':');
  const result: ProcessCgroups = { v1: {}, v1Controllers: new Set(v1Lines.flatMap((l) => l[1]!.split(','))), unified: null };
  for (const { point, fstype, superOptions } of mounts) {
    if (fstype === 'cgroup2' && v2Path !== undefined) result.unified = join(point, v2Path);
    if (fstype !== 'cgroup') continue;
    for (const entry of v1Lines) {
      for (const controller of entry[1]!.split(',')) if (superOptions.includes(controller)) result.v1[controller] = join(point, entry.slice(2).join(':'));
    }
  }
  return result;
}
