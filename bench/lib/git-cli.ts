import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Plain git for the benchmark's own set-up and for the naive harness's steps (not Genesis's). */
export async function gitCli(args: string[], cwd: string): Promise<string> {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@localhost',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@localhost',
  };
  const { stdout } = await execFileAsync('git', args, { cwd, env, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** Kibibytes a directory takes on disk (`du -sk`), to say how heavy a world is. */
export async function diskKb(dir: string): Promise<number> {
  const { stdout } = await execFileAsync('du', ['-sk', dir]);
  return Number(stdout.split('\t')[0]);
}
