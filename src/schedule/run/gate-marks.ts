import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorldRepo } from '../../world/world-repo.js';

/**
 * Marks of the gates running in this process, one file per episode under the world's scratch
 * directory, written before a gate starts and removed when it ends: what a run finds of them at its
 * start names the episodes whose gate was running when the run before died (crashClosing). Written
 * synchronously: the gate may take the process down (out of memory) before any later write.
 */
export function markGateRunning(world: Pick<WorldRepo, 'scratchDir'>, episodeId: string): void {
  const dir = join(world.scratchDir, 'gates-running');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, episodeId), `${process.pid}\n`);
}

export function clearGateRunning(world: Pick<WorldRepo, 'scratchDir'>, episodeId: string): void {
  rmSync(join(world.scratchDir, 'gates-running', episodeId), { force: true });
}

/** The episodes marked as in their gate by the run before (which holds the world no more: this run has its lock), and the marks gone. */
export function gatesRunningAtCrash(world: Pick<WorldRepo, 'scratchDir'>): Set<string> {
  const dir = join(world.scratchDir, 'gates-running');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return new Set();
  }
  rmSync(dir, { recursive: true, force: true });
  return new Set(names);
}
