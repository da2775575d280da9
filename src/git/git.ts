import { runCommand, type SpawnOutcome } from '../spawn/spawner.js';
import { GenesisError } from '../errors/genesis-error.js';

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

/** Who Genesis's commits are by (ledger records, candidates, accepted changes). */
export const GIT_IDENTITY: Readonly<Record<string, string>> = Object.freeze({
  GIT_AUTHOR_NAME: 'Genesis',
  GIT_AUTHOR_EMAIL: 'genesis@localhost',
  GIT_COMMITTER_NAME: 'Genesis',
  GIT_COMMITTER_EMAIL: 'genesis@localhost',
});

const SAFE_FLAGS = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'] as const;

/** What a git command's process runs with: this process's environment, Genesis's identity, the caller's variables, and the safe settings over all. */
function gitEnv(env: Record<string, string> | undefined): Record<string, string | undefined> {
  return { ...process.env, ...GIT_IDENTITY, ...env, ...SAFE_GIT_ENV };
}

function gitFailed(args: readonly string[], exitCode: number | null, stderr: Buffer | string, cause?: unknown): GenesisError {
  const tail = String(stderr).trim().split('\n').slice(-5).join('\n');
  return new GenesisError('git-failed', `git ${args.slice(0, 3).join(' ')} failed (exit ${exitCode ?? -1})${tail ? `: ${tail}` : ''}`, {
    hint: 'check that the world path is a git repository you can write to',
    ...(cause ? { cause } : {}),
  });
}

/** Runs git to its end through the spawner (src/spawn): a git that cannot be started is a failure like any other. */
async function runGit(args: readonly string[], options: Pick<GitOptions, 'cwd' | 'env' | 'input'>, maxBytes: number): Promise<SpawnOutcome> {
  try {
    return await runCommand({ file: 'git', args: [...SAFE_FLAGS, ...args], cwd: options.cwd, env: gitEnv(options.env), input: options.input, maxBytes });
  } catch (error) {
    if (error instanceof GenesisError) throw error;
    throw gitFailed(args, null, (error as Error).message, error);
  }
}

/** The most a whole-output git command may print; more is a failure, not a truncated answer. */
const MAX_OUTPUT = 512 * 1024 * 1024;

/**
 * Runs git with settings that make it safe against what an agent may have left in a tree:
 * hooks and fsmonitor are off, and no terminal prompt can block a run.
 */
export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  const result = await runGit(['-c', 'protocol.file.allow=always', ...args], options, MAX_OUTPUT);
  const exitCode = result.cut ? -1 : (result.exitCode ?? -1);
  if (exitCode !== 0 && !(options.okExitCodes ?? []).includes(exitCode))
    throw gitFailed(args, exitCode, result.cut ? 'its output passed 512 MiB' : result.stderr);
  return { stdout: result.stdout.toString('utf8'), exitCode };
}

/** Like `git`, with stdout as bytes: for output that counts bytes (cat-file --batch) or may not be UTF-8. */
export async function gitBytes(args: string[], options: GitOptions): Promise<Buffer> {
  const result = await runGit(args, options, MAX_OUTPUT);
  if (result.cut || result.exitCode !== 0) throw gitFailed(args, result.cut ? -1 : result.exitCode, result.cut ? 'its output passed 512 MiB' : result.stderr);
  return result.stdout;
}

/**
 * The first `maxBytes` of a git command's output, and whether it said more: git is stopped once
 * the cut is reached, so a command that would print gigabytes costs `maxBytes` of memory.
 */
export async function gitHead(args: string[], options: Pick<GitOptions, 'cwd' | 'env'>, maxBytes: number): Promise<{ text: string; cut: boolean }> {
  const result = await runGit(args, options, maxBytes);
  if (!result.cut && result.exitCode !== 0) throw gitFailed(args, result.exitCode, '');
  return { text: result.stdout.toString('utf8'), cut: result.cut };
}

/** Like `git`, trimming the trailing newline: for commands that print one value. */
export async function gitValue(args: string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.trim();
}
