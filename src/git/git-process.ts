import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { statSync } from 'node:fs';
import { GIT_IDENTITY, SAFE_GIT_ENV } from './git.js';

/**
 * Starts a git process that lives as long as it is used (cat-file --batch, update-ref --stdin),
 * with the same safe settings as every other git Genesis runs (git.ts): no hooks, no fsmonitor,
 * no system or user config, no replace refs. While idle it does not keep Node alive (see
 * holdAlive): a run that ends exits with it open, and git then ends on the EOF of its stdin.
 */
export function spawnLongLivedGit(repo: string, args: string[]): ChildProcessWithoutNullStreams {
  const child = spawn('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args], {
    cwd: repo,
    env: { ...process.env, ...GIT_IDENTITY, ...SAFE_GIT_ENV },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  holdAlive(child, false);
  return child;
}

/** Keeps Node running while an answer is awaited (true), or lets it exit (false, when idle). */
export function holdAlive(child: ChildProcessWithoutNullStreams, on: boolean): void {
  if (on) child.ref();
  else child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr] as unknown as Array<{ ref?: () => void; unref?: () => void }>) {
    if (on) stream.ref?.();
    else stream.unref?.();
  }
}

/** Something that holds a long-lived process for one repository. */
export interface RepoProcess {
  close(): void;
}

interface Entry<T extends RepoProcess> {
  value: T;
  /** The repository directory's identity when the process started: a world removed and made again at the same path is another world. */
  inode: string;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Long-lived processes by repository: at most `max` at once (the least recently used is closed),
 * each closed after `idleMs` unused, and replaced when the directory at that path is no longer
 * the one it was started in.
 */
export class RepoProcessPool<T extends RepoProcess> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly create: (repo: string) => T,
    private readonly max = 16,
    private readonly idleMs = 30_000,
  ) {}

  get(repo: string): T {
    const inode = inodeOf(repo);
    let entry = this.entries.get(repo);
    if (entry && entry.inode !== inode) {
      this.drop(repo);
      entry = undefined;
    }
    if (entry) {
      // Most recently used last, so the first key is the one to close when full.
      this.entries.delete(repo);
      this.entries.set(repo, entry);
    } else {
      while (this.entries.size >= this.max) this.drop(this.entries.keys().next().value!);
      entry = { value: this.create(repo), inode, timer: undefined };
      this.entries.set(repo, entry);
    }
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.drop(repo), this.idleMs);
    entry.timer.unref();
    return entry.value;
  }

  /** Forgets a process that ended by itself (the next get starts a new one). */
  forget(repo: string, value: T): void {
    const entry = this.entries.get(repo);
    if (entry?.value !== value) return;
    clearTimeout(entry.timer);
    this.entries.delete(repo);
  }

  drop(repo: string): void {
    const entry = this.entries.get(repo);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.entries.delete(repo);
    entry.value.close();
  }

  closeAll(): void {
    for (const repo of [...this.entries.keys()]) this.drop(repo);
  }
}

function inodeOf(path: string): string {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return 'missing';
  }
}
