import { readFile } from 'node:fs/promises';

/** Resident memory of a process now and at its peak, in bytes, from /proc (null once it is gone). */
export async function processMemory(pid: number): Promise<{ rss: number; peak: number } | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  if (status === null) return null;
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Bytes as MiB with one decimal, for reports. */
export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
