import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import { isAlive } from '../sandbox/process/process-alive.js';

/**
 * One embedded `genesis run` per world on a machine: a lock file holding the runner's host and
 * pid. A lock left by a process that no longer exists is taken over, so a crash never needs a
 * manual clean-up. A distributed scheduler takes it as well as the integrator lock in Redis, so
 * what waits for a run here (amend, task add) waits for it too.
 */
export async function acquireRunLock(scratchDir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(scratchDir, { recursive: true });
  const path = join(scratchDir, 'run.lock');
  const me = `${hostname()} ${process.pid}`;
  for (let tries = 0; tries < 3; tries++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${me}\n`);
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [host = '', pid = ''] = (await readFile(path, 'utf8').catch(() => '')).trim().split(' ');
    if (host === hostname() && isAlive(Number(pid))) {
      throw new GenesisError('run-in-progress', `another genesis run (pid ${pid}) is running this world`, {
        hint: `stop it first (kill -INT ${pid}); a world has one scheduler at a time`,
      });
    }
    if (host !== hostname() && host !== '') {
      throw new GenesisError('run-held-elsewhere', `a genesis run on ${host} (pid ${pid}) holds this world`, {
        hint: `stop it there, or remove ${path} if that machine is gone`,
      });
    }
    await rm(path, { force: true });
  }
  throw new GenesisError('run-lock', `could not take the run lock ${path}`, { hint: 'try again' });
}

/** Who holds the run lock, as its file says, or null when nobody does (no file, or a dead process of this machine). */
export async function readRunLock(scratchDir: string): Promise<{ host: string; pid: number; here: boolean } | null> {
  const text = await readFile(join(scratchDir, 'run.lock'), 'utf8').catch(() => null);
  if (text === null) return null;
  const [host = '', pid = ''] = text.trim().split(' ');
  const here = host === hostname();
  if (here && !isAlive(Number(pid))) return null;
  return { host, pid: Number(pid), here };
}
