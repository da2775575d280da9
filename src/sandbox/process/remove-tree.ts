import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { execa } from 'execa';
import { GenesisError } from '../../errors/genesis-error.js';
import { unmountUnder } from './disk-quota.js';

/**
 * Removes a directory tree whatever an agent or a check made of it. Node's recursive rm builds
 * whole paths and fails past PATH_MAX (ENAMETOOLONG at a few thousand nested directories) or on
 * a directory its user cannot write; GNU rm walks with openat and has no depth limit, and a
 * `chmod -R u+rwx` first gives back what a command took away from the owner. Throws
 * `remove-failed` only when the tree is still there after all that.
 */
export async function removeTree(path: string): Promise<void> {
  // A work dir under a disk quota is a tmpfs mount (see disk-quota.ts): rm cannot remove a mount point.
  await unmountUnder(path);
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch {
    // fall through to the tools that have no depth limit
  }
  const rmRf = () => execa('rm', ['-rf', '--one-file-system', '--', path], { reject: false });
  let result = await rmRf();
  if (result.exitCode !== 0 && (await exists(path))) {
    // Directories only, on this filesystem only: nothing outside the tree changes mode.
    await execa('find', [path, '-xdev', '-type', 'd', '!', '-perm', '-u=rwx', '-exec', 'chmod', 'u+rwx', '--', '{}', '+'], { reject: false });
    result = await rmRf();
  }
  if (await exists(path)) {
    throw new GenesisError('remove-failed', `could not remove ${path}: ${String(result.stderr).trim().split('\n').slice(-2).join('; ')}`, {
      hint: 'something in it is immutable, mounted or owned by another user; remove it by hand (genesis never runs a world from it)',
    });
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
  );
}

/** The directory a tree that could not be removed is moved to, beside it: cleared on the next start. */
export const TRASH_DIR = '.trash';

/**
 * Removes a tree or, when even that fails, moves it into a `.trash` directory beside it, so its
 * path is free for the next episode or gate either way. Never throws: whatever an agent left
 * behind must not change a verdict already reached, nor stop the next run from starting.
 * Resolves to false when the tree is still on disk (in the trash, or where it was).
 */
export async function discardTree(path: string): Promise<boolean> {
  try {
    await removeTree(path);
    return true;
  } catch {
    const trash = join(dirname(path), TRASH_DIR);
    await mkdir(trash, { recursive: true }).catch(() => undefined);
    await rename(path, join(trash, `${basename(path)}-${Date.now()}-${randomBytes(3).toString('hex')}`)).catch(() => undefined);
    return false;
  }
}
