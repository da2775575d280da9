import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where each unsandboxed agent launch is written down while it runs: its marker token, its
 * cgroup and the Genesis process that owns it. A Genesis that died (even by `kill -9`) leaves its
 * entries behind, and the next start kills what they name before closing the earlier run's
 * records. One directory per user on the machine, whatever the world.
 */
export interface AgentEntry {
  token: string;
  /** The agent's cgroup directory, or null when its processes are found by the marker alone. */
  cgroup: string | null;
  owner: { pid: number; start: string };
}

export function agentRegistryDir(): string {
  return process.env.GENESIS_AGENT_REGISTRY ?? join(tmpdir(), `genesis-agents-${process.getuid?.() ?? 'user'}`);
}

/** The start time of a process (field 22 of /proc/<pid>/stat): with the pid, it names one process even after pids wrap. */
export async function processStart(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' ? null : (fields[19] ?? null);
}

export async function registerAgent(entry: Omit<AgentEntry, 'owner'>): Promise<() => Promise<void>> {
  const dir = agentRegistryDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const owner = { pid: process.pid, start: (await processStart(process.pid)) ?? '' };
  const file = join(dir, `${entry.token}.json`);
  await writeFile(file, JSON.stringify({ ...entry, owner }));
  return () => rm(file, { force: true });
}

/** Entries whose owner is gone: what earlier runs left behind. */
export async function readOrphanedAgents(): Promise<Array<AgentEntry & { file: string }>> {
  const dir = agentRegistryDir();
  const orphaned: Array<AgentEntry & { file: string }> = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    const entry = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as AgentEntry,
      () => null,
    );
    if (!entry || typeof entry.token !== 'string' || !/^[0-9a-f]+$/.test(entry.token)) {
      await rm(file, { force: true });
      continue;
    }
    const alive = (await processStart(entry.owner?.pid ?? 0)) === entry.owner?.start;
    if (!alive) orphaned.push({ ...entry, file });
  }
  return orphaned;
}

export async function forgetAgent(entry: AgentEntry & { file: string }): Promise<void> {
  if (entry.cgroup) await rmdir(entry.cgroup).catch(() => undefined);
  await rm(entry.file, { force: true });
}
