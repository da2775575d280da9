import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { backoffDelay, backoffPolicy, type BackoffPolicy } from '../retry/backoff-policy.js';
import { git } from '../git/git.js';
import { redactUrl } from '../git/redact-url.js';
import type { RefMoveListener, WorldRepo } from './world-repo.js';

/** One remote of `publish:` in world.yaml. */
export interface PublishTarget {
  url: string;
  /** Push the ledger refs (refs/genesis/*) too. */
  ledger: boolean;
  /** The remote's branch to push to; given, the push is fast-forward only. @default the world's branch (genesis/<branch> in an adopted world) */
  branch?: string;
}

export type PublishEvent =
  | { type: 'published'; url: string; head: string; attempt: number }
  | { type: 'publish-failed'; url: string; attempt: number; error: string; retryInMs: number | null };

export interface PublisherOptions {
  /** Waits between tries of a failing push. @default 1 s doubling up to 60 s, a fifth of each at random, never giving up */
  backoff?: BackoffPolicy;
  /**
   * The world continues a repository of the user's (genesis init --adopt): its remotes hold the
   * user's own branches, so the accepted branch goes to `genesis/<branch>` unless a target names
   * one, and is never forced.
   */
  adopted?: boolean;
  onEvent?: (event: PublishEvent) => void;
}

const PENDING_FILE = 'publish-pending.json';

/**
 * `publish:`: after every accepted change, mirrors the accepted branch (and, if asked, the ledger)
 * to other remotes, so people follow the world where they already look (a forge). Each push
 * sends the branch as it is now, forced (the remote is a mirror), so one success makes up for any
 * number of failures before it. A failed push is retried with backoff and reported through
 * `onEvent`; remotes still behind when the run ends are written to `<world>/genesis/
 * publish-pending.json`, and the next Publisher on that world pushes them first: never lost.
 * Publishing never holds up or undoes an accepted change.
 */
export class Publisher implements RefMoveListener {
  // `marks` counts the moves seen: a push that succeeds clears the entry only if no move came while it ran.
  private readonly behind = new Map<string, { target: PublishTarget; attempt: number; marks: number; timer?: NodeJS.Timeout }>();
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly backoff: BackoffPolicy;

  constructor(
    private readonly world: WorldRepo,
    private readonly branch: string,
    private readonly targets: readonly PublishTarget[],
    private readonly options: PublisherOptions = {},
  ) {
    this.backoff = options.backoff ?? backoffPolicy({ initialMs: 1000, maxMs: 60_000, jitter: 0.2 });
  }

  /** Pushes what an earlier run left behind; call once before the run. */
  async resume(): Promise<void> {
    const text = await readFile(this.pendingFile, 'utf8').catch(() => null);
    const urls = new Set(text ? (JSON.parse(text) as string[]) : []);
    for (const target of this.targets) if (urls.has(target.url)) this.markBehind(target);
    await this.flush();
  }

  async moved(ref: string): Promise<boolean> {
    if (ref === `refs/heads/${this.branch}`) for (const target of this.targets) this.markBehind(target);
    return true;
  }

  /** Tries every remote still behind once more, now; resolves with the URLs still behind (also saved for the next run). */
  async flush(): Promise<string[]> {
    for (const entry of this.behind.values()) clearTimeout(entry.timer);
    await this.enqueue(() => this.pushAll());
    const left = [...this.behind.keys()];
    await this.savePending(left);
    return left;
  }

  /** Stops retrying by timer (flush still tries once; what is behind stays saved). */
  close(): void {
    this.closed = true;
    for (const entry of this.behind.values()) clearTimeout(entry.timer);
  }

  /**
   * A mirror is forced (it is the world's copy, nothing else writes it); a branch of someone's
   * repository (a named branch, or any branch of an adopted world's remote) only fast-forwards:
   * a push that would drop commits there fails and is reported instead.
   */
  private branchRefspec(target: PublishTarget): string {
    const local = `refs/heads/${this.branch}`;
    if (target.branch === undefined && !this.options.adopted) return `+${local}:${local}`;
    return `${local}:refs/heads/${target.branch ?? `genesis/${this.branch}`}`;
  }

  private get pendingFile(): string {
    return join(this.world.scratchDir, PENDING_FILE);
  }

  private markBehind(target: PublishTarget): void {
    const entry = this.behind.get(target.url) ?? { target, attempt: 0, marks: 0 };
    entry.marks += 1;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    this.behind.set(target.url, entry);
    void this.enqueue(() => this.pushOne(entry.target));
  }

  private async pushAll(): Promise<void> {
    for (const { target } of [...this.behind.values()]) await this.pushOne(target);
  }

  private async pushOne(target: PublishTarget): Promise<void> {
    const entry = this.behind.get(target.url);
    if (!entry) return;
    entry.attempt += 1;
    const marks = entry.marks;
    const refspecs = [this.branchRefspec(target), ...(target.ledger ? ['+refs/genesis/*:refs/genesis/*'] : [])];
    // git's own message (the last lines of its stderr) says why: shown, since a person must fix it.
    const error = await git(['push', '--quiet', target.url, ...refspecs], { cwd: this.world.path }).then(
      () => null,
      (e: unknown) => redactAll(e instanceof Error ? e.message : String(e), target.url),
    );
    if (error === null) {
      // The branch moved again while this push ran (it sent what it read at its start): the push
      // queued for that move must still find the remote behind, else the last change is never sent.
      if (entry.marks === marks) this.behind.delete(target.url);
      else entry.attempt = 0;
      const head = (await this.world.resolveRef(`refs/heads/${this.branch}`)) ?? '';
      this.options.onEvent?.({ type: 'published', url: redactUrl(target.url), head, attempt: entry.attempt });
      return;
    }
    // A policy that gives up leaves the remote behind until the next flush or run.
    const retryInMs = backoffDelay(this.backoff, entry.attempt, Math.random());
    if (retryInMs === null) {
      this.options.onEvent?.({ type: 'publish-failed', url: redactUrl(target.url), attempt: entry.attempt, error, retryInMs: null });
      await this.savePending([...this.behind.keys()]);
      return;
    }
    this.options.onEvent?.({ type: 'publish-failed', url: redactUrl(target.url), attempt: entry.attempt, error, retryInMs });
    await this.savePending([...this.behind.keys()]);
    if (this.closed) return;
    entry.timer = setTimeout(() => void this.enqueue(() => this.pushOne(target)), retryInMs);
    entry.timer.unref();
  }

  private async savePending(urls: string[]): Promise<void> {
    if (urls.length === 0) {
      await rm(this.pendingFile, { force: true });
      return;
    }
    await mkdir(dirname(this.pendingFile), { recursive: true });
    await writeFile(this.pendingFile, `${JSON.stringify(urls)}\n`);
  }

  /** One push at a time: pushes of one mirror to one remote must not race. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }
}

function redactAll(text: string, url: string): string {
  return text.split(url).join(redactUrl(url));
}
