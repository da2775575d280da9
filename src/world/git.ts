import { execa } from 'execa';
import { GenesisError } from '../errors.js';

export interface GitOptions {
  /** Repository (bare or not) the command runs against. */
  cwd: string;
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (e.g. 1 from merge-tree on a conflict). */
  okExitCodes?: number[];
}

export interface GitResult {
  stdout: string;
  exitCode: number;
}

/**
 * What every git Genesis runs gets, whatever it reads: no system or user config (an unsandboxed
 * agent could have written ~/.gitconfig: hooks, fsmonitor), no terminal prompt, and no replace
 * refs: `refs/replace/<blob>` would make git show one object's content under another's name, so
 * a protected test could read differently from what its id says. Use it for every git process.
 */
export const SAFE_GIT_ENV: Readonly<Record<string, string>> = Object.freeze({
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_NO_REPLACE_OBJECTS: '1',
});

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Genesis',
  GIT_AUTHOR_EMAIL: 'genesis@localhost',
  GIT_COMMITTER_NAME: 'Genesis',
  GIT_COMMITTER_EMAIL: 'genesis@localhost',
};

/**
 * Runs git with settings that make it safe against what an agent may have left in a tree:
 * hooks and fsmonitor are off, and no terminal prompt can block a run.
 */
export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  const result = await execa(
    'git',
    ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'protocol.file.allow=always', ...args],
    {
      cwd: options.cwd,
      input: options.input,
      env: { ...IDENTITY, ...options.env, ...SAFE_GIT_ENV },
      reject: false,
      stripFinalNewline: false,
      maxBuffer: 512 * 1024 * 1024,
    },
  );
  const exitCode = result.exitCode ?? -1;
  if (exitCode !== 0 && !(options.okExitCodes ?? []).includes(exitCode)) {
    const stderr = String(result.stderr).trim().split('\n').slice(-5).join('\n');
    throw new GenesisError('git-failed', `git ${args.slice(0, 3).join(' ')} failed (exit ${exitCode}): ${stderr}`, {
      hint: 'check that the world path is a git repository you can write to',
      cause: result,
    });
  }
  return { stdout: String(result.stdout), exitCode };
}

/** Like `git`, trimming the trailing newline: for commands that print one value. */
export async function gitValue(args: string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.trim();
}
