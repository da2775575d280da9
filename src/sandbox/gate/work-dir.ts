import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { GenesisError } from '../../errors/genesis-error.js';
import { handOverSmallTree } from './hand-over.js';
import { leaseUid } from '../process/uid-leases.js';

/** The unprivileged user a sandboxed command runs as when Genesis itself runs as root. */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

export interface SandboxUser {
  uid: number;
  gid: number;
}

const execFileAsync = promisify(execFile);

/**
 * Makes `workDir` writable by the user the command will run as, and returns that user with the
 * directory's absolute path.
 *
 * As root we never run the command as root, and a bind mount keeps host ownership, so uid 1000
 * could not write the root-owned tree Genesis checked out: the tree is handed to 1000:1000 for the
 * run (root can still read and delete it afterwards). Only files not yet owned are changed, since
 * a chown bumps ctime and git would then re-hash the whole tree. `find` does not follow links and
 * `chown -h` changes links, never their targets, so a symlink in a candidate cannot make us chown
 * a file outside the tree. As any other user the command runs as that user, who owns the tree.
 */
export async function prepareWorkDir(workDir: string, as: SandboxUser = { uid: SANDBOX_UID, gid: SANDBOX_GID }): Promise<{ path: string; user: SandboxUser }> {
  const located = await locateWorkDir(workDir, as);
  if (located.handOver) await handOverWorkDir(located.path, located.user);
  return { path: located.path, user: located.user };
}

/**
 * prepareWorkDir's first half: the work dir's absolute path and the user the command will run as,
 * and whether the tree must be handed to that user (Genesis runs as root) before the command runs,
 * for a caller that does that in a process it starts anyway (a warm sandbox's mount script).
 */
export async function locateWorkDir(
  workDir: string,
  as: SandboxUser = { uid: SANDBOX_UID, gid: SANDBOX_GID },
): Promise<{ path: string; user: SandboxUser; handOver: boolean }> {
  // Resolved, so neither find nor a bind mount acts on a symlink instead of the directory.
  const path = await realpath(resolve(workDir)).catch(() => resolve(workDir));
  const info = await stat(path).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new GenesisError('sandbox-workdir-missing', `The sandbox work dir ${path} is not a directory.`);
  }
  const uid = process.getuid?.() ?? SANDBOX_UID;
  if (uid !== 0) return { path, user: { uid, gid: process.getgid?.() ?? uid }, handOver: false };
  return { path, user: as, handOver: true };
}

/** prepareWorkDir's second half: chowns to `as` what it does not own yet (see prepareWorkDir). */
export async function handOverWorkDir(path: string, as: SandboxUser): Promise<void> {
  // A small tree from this process (find and chown cost two spawns); a large one, or one that failed, through find (its error says why).
  if ((await handOverSmallTree(path, as)) === 'handed-over') return;
  try {
    await execFileAsync('find', [path, ...handOverArgs(as)]);
  } catch (cause) {
    throw new GenesisError('sandbox-workdir-chown', `Could not hand ${path} to uid ${as.uid}.`, { cause });
  }
}

/** What follows the tree in `find <tree> …` to hand it to `as`: only entries not yet owned, links themselves, never their targets. */
export function handOverArgs(as: SandboxUser): string[] {
  const notOurs = ['(', '!', '-uid', `${as.uid}`, '-o', '!', '-gid', `${as.gid}`, ')'];
  return [...notOurs, '-exec', 'chown', '-h', `${as.uid}:${as.gid}`, '--', '{}', '+'];
}

/**
 * A user of its own for one sandbox run (100000–159999, leased: no other live sandbox of this
 * machine has it), preferably the one the work dir already belongs to, so the steps of one gate
 * keep their tree's owner. The kernel counts RLIMIT_NPROC, keyrings and other per-user limits
 * per uid, so under bubblewrap (which has no pids cgroup) a fork bomb in one gate exhausts only
 * its own user's processes, not those of a gate beside it. Release it when the run ended (its
 * processes are gone with its PID namespace). Not leased for a non-root orchestrator, whose
 * sandboxes all run as itself.
 */
export async function leaseIsolatedUser(workDir: string): Promise<{ user: SandboxUser; release(): void }> {
  if (process.getuid?.() !== 0) return { user: { uid: SANDBOX_UID, gid: SANDBOX_GID }, release: () => undefined };
  const owner = (await stat(workDir).catch(() => null))?.uid;
  const lease = leaseUid(owner);
  return { user: { uid: lease.uid, gid: lease.uid }, release: () => lease.release() };
}
