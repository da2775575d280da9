import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { relative, isAbsolute } from 'node:path';
import type { SecretRef } from '../manifest/notify-config.js';

/** A secret read: its value, or why there is none. */
export type SecretRead = { value: string; missing?: undefined } | { value?: undefined; missing: string };

/** The most of a secret file read: a URL or a key is a line, not a megabyte. */
const MAX_SECRET_FILE = 64 * 1024;

/**
 * The value a reference names, or why there is none. A variable is read from `env`; a file must
 * be a regular file outside `worldDir` (a file in the world is one an agent may read or write, so
 * its content is no secret and no setting Genesis may trust), opened without blocking, and its
 * first line is the value.
 */
export async function readSecretRef(ref: SecretRef, env: Record<string, string | undefined>, worldDir: string | undefined): Promise<SecretRead> {
  if ('env' in ref) {
    const value = env[ref.env];
    return value ? { value } : { missing: `$${ref.env} is not set` };
  }
  let real: string;
  try {
    real = await realpath(ref.file);
  } catch {
    return { missing: `${ref.file} cannot be read` };
  }
  if (worldDir !== undefined) {
    const world = await realpath(worldDir).catch(() => worldDir);
    const inside = relative(world, real);
    if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) return { missing: `${ref.file} is inside the world, where agents reach it` };
  }
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => null);
  if (handle === null) return { missing: `${ref.file} cannot be read` };
  try {
    if (!(await handle.stat()).isFile()) return { missing: `${ref.file} is not a regular file` };
    const buffer = Buffer.alloc(MAX_SECRET_FILE);
    const { bytesRead } = await handle.read(buffer, 0, MAX_SECRET_FILE, 0);
    const value = buffer.subarray(0, bytesRead).toString('utf8').split(/\r?\n/)[0]!.trim();
    return value ? { value } : { missing: `${ref.file} is empty` };
  } finally {
    await handle.close();
  }
}
