import { readFile } from 'node:fs/promises';

/** One line of a `/proc/<pid>/mountinfo` table, the fields Genesis reads. */
export interface MountEntry {
  /** Where it is mounted, unescaped (mountinfo writes space, tab, newline and backslash as octal). */
  point: string;
  /** The mount's own options (`rw`, `nosuid`...). */
  options: string[];
  fstype: string;
  source: string;
  /** The file system's options (a read-only file system is `ro` here even where the mount says `rw`). */
  superOptions: string[];
}

/**
 * The mounts of a process's mount namespace (this process's by default), or none when the table
 * cannot be read. Each line is "id parent dev root point options [optional…] - fstype source superoptions".
 */
export async function readMountinfo(pid: number | 'self' = 'self'): Promise<MountEntry[]> {
  const table = await readFile(`/proc/${pid}/mountinfo`, 'utf8').catch(() => '');
  const entries: MountEntry[] = [];
  for (const line of table.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const fields = before.split(' ');
    const [fstype = '', source = '', superOptions = ''] = after.split(' ');
    entries.push({ point: unescapeMountPath(fields[4] ?? ''), options: (fields[5] ?? '').split(','), fstype, source, superOptions: superOptions.split(',') });
  }
  return entries;
}

function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
