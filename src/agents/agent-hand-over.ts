import { execFile } from 'node:child_process';
import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GenesisError } from '../errors.js';
import { handOverArgs, locateWorkDir, type SandboxUser } from '../sandbox/work-dir.js';

const execFileAsync = promisify(execFile);

/**
 * Entries handed over from this process before the rest is left to `find`: a fresh workspace of a
 * small world (tens of entries) is done in ~2 ms this way, against ~7 ms for find and the chown it
 * starts; a large tree is faster in find.
 */
const IN_PROCESS_ENTRIES = 2_000;

/**
 * Gives the agent's user (uid 1000, when Genesis runs as root) the directories it may write, as
 * prepareWorkDir does for one. Only entries not yet owned change (a chown bumps ctime, and git
 * would re-hash the tree); links themselves, never their targets, and a link is never followed
 * into (lchown, and directories known by lstat). Small trees are walked here, all entries at
 * once; past IN_PROCESS_ENTRIES one `find` over all of them finishes the job (see handOverArgs).
 */
export async function handOverAgentDirs(dirs: readonly string[]): Promise<void> {
  const located = await Promise.all(dirs.map((dir) => locateWorkDir(dir)));
  const todo = located.filter((l) => l.handOver);
  if (todo.length === 0) return;
  const user = todo[0]!.user;
  const paths = todo.map((l) => l.path);
  try {
    const budget = { left: IN_PROCESS_ENTRIES };
    await Promise.all(paths.map((path) => handOver(path, user, budget)));
    if (budget.left < 0) await execFileAsync('find', [...paths, ...handOverArgs(user)]);
  } catch (cause) {
    throw new GenesisError('sandbox-workdir-chown', `Could not hand ${paths.join(' and ')} to uid ${user.uid}.`, { cause });
  }
}

/** Hands `path` and what is under it to `as`, until the budget runs out (then find does the rest). */
async function handOver(path: string, as: SandboxUser, budget: { left: number }): Promise<void> {
  if (--budget.left < 0) return;
  const info = await lstat(path);
  if (info.uid !== as.uid || info.gid !== as.gid) await lchown(path, as.uid, as.gid);
  if (!info.isDirectory()) return;
  const names = await readdir(path);
  await Promise.all(names.map((name) => handOver(join(path, name), as, budget)));
}
