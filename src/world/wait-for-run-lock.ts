import { setTimeout as sleep } from 'node:timers/promises';
import { isGenesisError } from '../errors/genesis-error.js';
import { acquireRunLock } from './run-lock.js';

/**
 * Takes the world's run lock, waiting while a `genesis run` on this machine holds it: a running
 * integrator puts back any branch move it did not make, so a person's change lands between runs.
 * `onWait` is called once, with the holder's message, when waiting starts.
 */
export async function waitForRunLock(
  scratchDir: string,
  options: { onWait?: (message: string) => void; pollMs?: number; signal?: AbortSignal } = {},
): Promise<{ release(): Promise<void> }> {
  let told = false;
  for (;;) {
    try {
      return await acquireRunLock(scratchDir);
    } catch (error) {
      // Only a live run on this machine is worth waiting for; a lock held on another host is not ours to wait out.
      if (!isGenesisError(error) || error.code !== 'run-in-progress') throw error;
      if (!told) options.onWait?.(error.message);
      told = true;
      await sleep(options.pollMs ?? 500, undefined, { signal: options.signal });
    }
  }
}
