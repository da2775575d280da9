import { cp, mkdir, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** One file or directory of the host's HOME, and where it appears in the agent's private HOME. */
export interface HomeFileBind {
  source: string;
  target: string;
}

/**
 * The host HOME's files an agent is given (`agent.homeFiles`: a CLI's login or configuration,
 * such as `.codex/auth.json` or `.claude/.credentials.json`), each to be bound read-only at the
 * same place in its private HOME. Nothing of the host's HOME is passed unless named. Names that do
 * not exist are left out. An empty file or directory is made at each target first, so the bind
 * has a mount point the agent's user owns the way to.
 */
export async function homeFileBinds(names: readonly string[] | undefined, home: string, hostHome = homedir()): Promise<HomeFileBind[]> {
  const binds: HomeFileBind[] = [];
  for (const name of names ?? []) {
    const source = join(hostHome, name);
    const info = await stat(source).catch(() => null);
    if (!info) continue;
    const target = join(home, name);
    await mkdir(dirname(target), { recursive: true });
    if (info.isDirectory()) await mkdir(target, { recursive: true });
    else await writeFile(target, '', { flag: 'a' });
    binds.push({ source, target });
  }
  return binds;
}

/** For an agent with no sandbox (no mounts): copies of the named files. */
export async function copyHomeFiles(names: readonly string[] | undefined, home: string, hostHome = homedir()): Promise<void> {
  for (const name of names ?? []) {
    const source = join(hostHome, name);
    if (!(await stat(source).catch(() => null))) continue;
    await mkdir(dirname(join(home, name)), { recursive: true });
    await cp(source, join(home, name), { recursive: true, force: true });
  }
}
