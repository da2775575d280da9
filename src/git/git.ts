import { execa } from 'execa';
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

/**
 * Runs git with settings that make it safe against what an agent may have left in a tree:
 * hooks and fsmonitor are off, and no terminal prompt can block a run.
 */
export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  const result = await execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'protocol.file.allow=always', ...args], {
    cwd: options.cwd,
    input: options.input,
    env: { ...GIT_IDENTITY, ...options.env, ...SAFE_GIT_ENV },
    reject: false,
    stripFinalNewline: false,
    maxBuffer: 512 * 1024 * 1024,
  });
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

/** Like `git`, with stdout as bytes: for output that counts bytes (cat-file --batch) or may not be UTF-8. */
export async function gitBytes(args: string[], options: GitOptions): Promise<Buffer> {
  const result = await execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args], {
    cwd: options.cwd,
    input: options.input,
    env: { ...GIT_IDENTITY, ...options.env, ...SAFE_GIT_ENV },
    reject: false,
    encoding: 'buffer',
    maxBuffer: 512 * 1024 * 1024,
  });
  if (result.exitCode !== 0) {
    throw new GenesisError(
      'git-failed',
      `git ${args.slice(0, 3).join(' ')} failed (exit ${result.exitCode ?? -1}): ${Buffer.from(result.stderr).toString('utf8').trim().split('\n').slice(-5).join('\n')}`,
      {
        hint: 'check that the world path is a git repository you can write to',
        cause: result,
      },
    );
  }
  return Buffer.from(result.stdout);
}

/**
 * The first `maxBytes` of a git command's output, and whether it said more: git is stopped once
 * the cut is reached, so a command that would print gigabytes costs `maxBytes` of memory.
 */
export async function gitHead(args: string[], options: Pick<GitOptions, 'cwd' | 'env'>, maxBytes: number): Promise<{ text: string; cut: boolean }> {
  const child = execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args], {
    cwd: options.cwd,
    env: { ...GIT_IDENTITY, ...options.env, ...SAFE_GIT_ENV },
    buffer: false,
    reject: false,
    stderr: 'ignore',
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > maxBytes) {
      cut = true;
      child.kill();
      break;
    }
  }
  const result = await child;
  if (!cut && result.exitCode !== 0) {
    throw new GenesisError('git-failed', `git ${args.slice(0, 3).join(' ')} failed (exit ${result.exitCode ?? -1})`, {
      hint: 'check that the world path is a git repository you can write to',
      cause: result,
    });
  }
  return { text: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'), cut };
}

/** Like `git`, trimming the trailing newline: for commands that print one value. */
export async function gitValue(args: string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.trim();
}
