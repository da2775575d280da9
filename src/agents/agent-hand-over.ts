import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { GenesisError } from '../errors.js';
import { handOverArgs, locateWorkDir } from '../sandbox/work-dir.js';

const execFileAsync = promisify(execFile);

/**
 * Gives the agent's user (uid 1000, when Genesis runs as root) the directories it may write, as
 * prepareWorkDir does for one, with one `find` over all of them: a process less on every launch.
 * Only entries not yet owned change; links themselves, never their targets (see handOverArgs).
 */
export async function handOverAgentDirs(dirs: readonly string[]): Promise<void> {
  const located = await Promise.all(dirs.map((dir) => locateWorkDir(dir)));
  const todo = located.filter((l) => l.handOver);
  if (todo.length === 0) return;
  const paths = todo.map((l) => l.path);
  try {
    await execFileAsync('find', [...paths, ...handOverArgs(todo[0]!.user)]);
  } catch (cause) {
    throw new GenesisError('sandbox-workdir-chown', `Could not hand ${paths.join(' and ')} to uid ${todo[0]!.user.uid}.`, { cause });
  }
}
