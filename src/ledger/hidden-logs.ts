import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
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

/** Names are episode and verification ids: kept to one path segment whatever they hold. */
function safeName(name: string): string {
  return name.replace(/[^\w.-]/g, '_');
}

function fileOf(world: WorldRepo, name: string): string {
  return join(hiddenLogDir(world), `${safeName(name)}.log`);
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

/**
 * The hidden checks' output of every gate that judged an episode's change, oldest name first: its
 * own gate (under its id), a replay (`<id>-replay`) and the integration queue's verifications of it
 * (`<id>-v<generation>`, the only gate of a change handed to the queue). Null when there is none.
 */
export async function readEpisodeHiddenLogs(world: WorldRepo, episodeId: string): Promise<string | null> {
  const own = safeName(episodeId);
  const names = (await readdir(hiddenLogDir(world)).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.log'))
    .map((f) => f.slice(0, -'.log'.length))
    .filter((n) => n === own || n === `${own}-replay` || (/^-v\d+$/.test(n.slice(own.length)) && n.startsWith(own)))
    .sort();
  const logs = (await Promise.all(names.map((n) => readHiddenLog(world, n)))).filter((t): t is string => t !== null);
  return logs.length > 0 ? logs.join('\n') : null;
}
