import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scrubForStorage } from './secret-env.js';
import type { WorldRepo } from '../world/world-repo.js';

/**
 * Where the output of hidden (holdout) checks is kept: a directory of the world's scratch space
 * that only the orchestrator's user can read. Never the object store: every workspace borrows the
 * world's objects through its alternates, so a log stored as a blob there (a ledger artifact)
 * is readable by any agent that lists them. A person reads it with `genesis show`.
 */
export function hiddenLogDir(world: WorldRepo): string {
  return join(world.scratchDir, 'hidden');
}

function fileOf(world: WorldRepo, name: string): string {
  // Names are episode ids (and `<id>-replay`): keep them to one path segment whatever they hold.
  return join(hiddenLogDir(world), `${name.replace(/[^\w.-]/g, '_')}.log`);
}

/** Keeps the hidden checks' output of one gate run under `name` (the gate's name). */
export async function writeHiddenLog(world: WorldRepo, name: string, text: string): Promise<void> {
  const dir = hiddenLogDir(world);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory's mode alone: make sure it is private.
  await chmod(dir, 0o700);
  await writeFile(fileOf(world, name), scrubForStorage(text), { mode: 0o600 });
}

/** The hidden checks' output kept under `name`, or null when there is none. */
export async function readHiddenLog(world: WorldRepo, name: string): Promise<string | null> {
  return readFile(fileOf(world, name), 'utf8').catch(() => null);
}
