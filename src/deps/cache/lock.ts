import { open, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';

const EMPTY_LOCK_GRACE_MS = 10_000;

/** Who holds a lock: written into the lock file so a waiter can tell a live holder from a dead one. */
interface LockOwner {
  host: string;
  pid: number;
  since: number;
}

export interface HeldLock {
  release(): Promise<void>;
}

/** True when a process with this id runs on this machine. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock file at `path` (created exclusively), or returns null when a live process holds
 * it. A lock left by a process that died on this machine is taken over; one held from another
 * host (a cache on a shared disk) is respected until it is released.
 */
export async function tryLock(path: string): Promise<HeldLock | null> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
      const owner: LockOwner = { host: hostname(), pid: process.pid, since: Date.now() };
      await handle.writeFile(JSON.stringify(owner));
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(path);
    // A lock file caught between its creation and its first write has no owner yet: wait for it,
    // unless it has stayed empty for long (its creator died in between).
    const age = Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? Date.now());
    if (!owner && age < EMPTY_LOCK_GRACE_MS) return null;
    if (owner && (owner.host !== hostname() || processAlive(owner.pid))) return null;
    await rm(path, { force: true });
  }
  return null;
}

async function readOwner(path: string): Promise<LockOwner | null> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? (owner as LockOwner) : null;
  } catch {
    return null;
  }
}
