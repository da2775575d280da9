import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { holdAlive, RepoProcessPool, spawnLongLivedGit, type RepoProcess } from './git-process.js';

/** One ref move of a transaction. */
export interface RefUpdate {
  ref: string;
  /** The commit the ref will point at. */
  next: string;
  /** Move only if the ref points here now (null: only if it does not exist); undefined: whatever it points at. */
  expected?: string | null;
}

const ZERO = '0'.repeat(40);
const OID = /^[0-9a-f]{40}$/;
const REF = /^refs\/[^\s\0]+$/;

/**
 * One long-lived `git update-ref --stdin` for a repository, driven one transaction at a time
 * (`start`, the updates, `prepare`, `commit`): every ref of a transaction moves, or none does,
 * with git's own locking, so it is as safe against other writers as `git update-ref` and costs no
 * process. A transaction that cannot be prepared (a ref moved: the compare-and-swap lost) makes
 * git exit; the next transaction starts a new process.
 */
class RefUpdater implements RepoProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private stderr = '';
  private waiting: { lines: number; resolve: (result: { ok: boolean; error: string }) => void } | null = null;
  private ended = false;

  constructor(repo: string, onEnd: (updater: RefUpdater) => void) {
    this.child = spawnLongLivedGit(repo, ['update-ref', '--stdin']);
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.out += chunk.toString();
      this.check();
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    const end = () => {
      if (this.ended) return;
      this.ended = true;
      onEnd(this);
      this.waiting?.resolve({ ok: false, error: this.stderr.trim() || 'git update-ref ended' });
      this.waiting = null;
    };
    this.child.on('close', end);
    this.child.on('error', end);
    this.child.stdin.on('error', end);
  }

  get alive(): boolean {
    return !this.ended;
  }

  run(updates: readonly RefUpdate[]): Promise<{ ok: boolean; error: string }> {
    const lines = updates.map((u) => `update ${u.ref} ${u.next}${u.expected === undefined ? '' : ` ${u.expected ?? ZERO}`}\n`);
    return new Promise((resolve) => {
      this.out = '';
      holdAlive(this.child, true);
      this.waiting = {
        lines: 3,
        resolve: (result) => {
          holdAlive(this.child, false);
          resolve(result);
        },
      };
      // One write: a parent that dies after it still leaves the whole transaction to git.
      this.child.stdin.write(`start\n${lines.join('')}prepare\ncommit\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }

  private check(): void {
    if (!this.waiting) return;
    const lines = this.out.split('\n');
    if (lines.length - 1 < this.waiting.lines) return;
    const ok = lines.slice(0, 3).join('|') === 'start: ok|prepare: ok|commit: ok';
    const { resolve } = this.waiting;
    this.waiting = null;
    resolve({ ok, error: ok ? '' : lines.join('\n') });
  }
}

const updaters = new RepoProcessPool<RefUpdater>((repo) => new RefUpdater(repo, (u) => updaters.forget(repo, u)));
const chains = new Map<string, Promise<unknown>>();

/**
 * Moves every ref of `updates` in one transaction: all or none. Resolves false (with git's reason)
 * when one ref was not where `expected` says, or the transaction failed otherwise. Updates of one
 * repository run one after another.
 */
export function updateRefs(repo: string, updates: readonly RefUpdate[]): Promise<{ ok: boolean; error: string }> {
  for (const u of updates) {
    if (!REF.test(u.ref) || !OID.test(u.next) || (u.expected !== undefined && u.expected !== null && !OID.test(u.expected))) {
      return Promise.reject(new Error(`not a ref update: ${u.ref} ${u.next} ${u.expected ?? ''}`));
    }
  }
  const previous = chains.get(repo) ?? Promise.resolve();
  const next = previous.then(() => updaters.get(repo).run(updates));
  const tail = next.catch(() => undefined);
  chains.set(repo, tail);
  void tail.then(() => {
    if (chains.get(repo) === tail) chains.delete(repo);
  });
  return next;
}
