import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import { git } from '../git/git.js';
import { redactUrl } from '../git/redact-url.js';
import type { WorldRepo, RefMoveListener } from './world-repo.js';
import { LocalWorld } from './local-world.js';

const LEDGER_REFS = 'refs/genesis/';
const FETCH_REFSPECS = ['+refs/heads/*:refs/heads/*', `+${LEDGER_REFS}*:${LEDGER_REFS}*`];

/**
 * A world that lives on a git server (a bare repository over file://, ssh or http), as the
 * scheduler sees it: a local mirror that every read goes to, and a server that every move of the
 * accepted branch is pushed to by compare-and-swap (`--force-with-lease=<branch>:<expected>`), so
 * two schedulers, or a person pushing, can never overwrite each other's accepted commits. The
 * ledger refs this scheduler wrote since the last push go beside the branch, each under a lease of
 * its own (a worker may have pushed a newer record of the same episode: that one is kept).
 */
export interface RemoteWorld {
  repo: WorldRepo;
  url: string;
  /** Brings one episode's ledger ref (and the candidate it carries) from the server, as a worker pushed it. */
  fetchEpisode(id: string): Promise<void>;
  /** Brings one ledger ref (a verification record a worker pushed, say) from the server, if it is there. */
  fetchRef(ref: string): Promise<void>;
  /** Pushes the ledger refs written since the last push; resolves with those the server refused. */
  flush(): Promise<string[]>;
}

/** Opens (creating or updating) the mirror of a world on a git server, under `cacheDir`. */
export async function openRemoteWorld(url: string, cacheDir: string): Promise<RemoteWorld> {
  const mirror = join(cacheDir, `${createHash('sha1').update(url).digest('hex').slice(0, 16)}-scheduler.git`);
  if (!(await stat(mirror).catch(() => null))) {
    await mkdir(cacheDir, { recursive: true });
    await git(['init', '--quiet', '--bare', mirror], { cwd: cacheDir });
  }
  const fetched = await git(['fetch', '--quiet', '--no-tags', '--prune', url, ...FETCH_REFSPECS], { cwd: mirror, okExitCodes: [128] });
  if (fetched.exitCode !== 0) {
    throw new GenesisError('world-unreachable', `cannot fetch the world from ${redactUrl(url)}`, {
      hint: 'check the URL and your access to it (git ls-remote <url> should list refs/heads/main); a world on a server is a bare repository made by genesis init, pushed there with git push --mirror',
    });
  }
  // The mirror's HEAD follows the server's (a fresh bare repository's names a branch that may not exist).
  const head = /^ref: (refs\/heads\/\S+)\tHEAD$/m.exec((await git(['ls-remote', '--symref', url, 'HEAD'], { cwd: mirror })).stdout)?.[1];
  if (head) await git(['symbolic-ref', 'HEAD', head], { cwd: mirror });
  const repo = LocalWorld.at(mirror);
  const sync = new ServerSync(repo, url);
  await sync.snapshot();
  repo.onRefMoved(sync);
  return { repo, url, fetchEpisode: (id) => sync.fetchRef(`${LEDGER_REFS}episodes/${id}`), fetchRef: (ref) => sync.fetchRef(ref), flush: () => sync.flush() };
}

type PushLine = { flag: string; ref: string; summary: string };
/** What the server said of each ref; `all` when git exited 0 (refs already there may go unlisted). */
type PushAnswer = { lines: PushLine[]; all: boolean };

class ServerSync implements RefMoveListener {
  /** Each ledger ref as the server last had it (after a fetch or a push of ours). */
  private synced = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: WorldRepo,
    private readonly url: string,
  ) {}

  async snapshot(): Promise<void> {
    this.synced = await this.ledgerRefs();
  }

  moved(ref: string, next: string, expected: string | null): Promise<boolean> {
    if (!ref.startsWith('refs/heads/')) return Promise.resolve(true);
    return this.serialized(() => this.pushMove(ref, next, expected));
  }

  fetchRef(ref: string): Promise<void> {
    return this.serialized(async () => {
      // A worker that failed before pushing leaves no ref: the scheduler then has its own record (or none).
      const r = await git(['fetch', '--quiet', '--no-tags', this.url, `+${ref}:${ref}`], { cwd: this.repo.path, okExitCodes: [1, 128] });
      if (r.exitCode !== 0) return;
      const sha = await this.repo.resolveRef(ref);
      if (sha) this.synced.set(ref, sha);
    });
  }

  flush(): Promise<string[]> {
    return this.serialized(async () => {
      const changed = await this.changedLedgerRefs();
      if (changed.length === 0) return [];
      const answer = await this.push(
        changed.flatMap((c) => lease(c.ref, this.synced.get(c.ref) ?? null)),
        changed.map((c) => `${c.sha}:${c.ref}`),
      );
      return this.settleLedger(changed, answer);
    });
  }

  private async pushMove(ref: string, next: string, expected: string | null): Promise<boolean> {
    const changed = await this.changedLedgerRefs();
    let answer: PushAnswer;
    try {
      answer = await this.push(
        [...lease(ref, expected), ...changed.flatMap((c) => lease(c.ref, this.synced.get(c.ref) ?? null))],
        [`${next}:${ref}`, ...changed.map((c) => `${c.sha}:${c.ref}`)],
      );
    } catch (error) {
      // Whether the server took it is unknown: the local ref goes back, and the next fetch says.
      await git(['update-ref', ref, expected ?? '0'.repeat(40), next], { cwd: this.repo.path, okExitCodes: [1, 128] });
      throw error;
    }
    this.settleLedger(changed, answer);
    if (accepted(answer, ref)) return true;
    // The server's branch moved (another scheduler, a person): take it, and let the caller try again.
    await git(['fetch', '--quiet', '--no-tags', this.url, `+${ref}:${ref}`], { cwd: this.repo.path });
    return false;
  }

  /** `git push --porcelain`: one line per ref. Exit 1 is a refusal of some refs, anything else a failure to talk to the server. */
  private async push(options: string[], refspecs: string[]): Promise<PushAnswer> {
    const r = await git(['push', '--porcelain', ...options, this.url, ...refspecs], { cwd: this.repo.path, okExitCodes: [1, 128] });
    const lines = r.stdout.split('\n').flatMap((line): PushLine[] => {
      const m = /^(.)\t[^\t]*:([^\t]+)\t(.*)$/.exec(line);
      return m ? [{ flag: m[1]!, ref: m[2]!, summary: m[3]! }] : [];
    });
    if (r.exitCode !== 0 && lines.length === 0) {
      throw new GenesisError('world-push-failed', `could not push to the world's server ${redactUrl(this.url)} (git exit ${r.exitCode})`, {
        hint: 'check the connection and your write access (git push --dry-run <url>); the accepted branch on the server was not moved by this change',
      });
    }
    return { lines, all: r.exitCode === 0 };
  }

  private settleLedger(changed: Array<{ ref: string; sha: string }>, answer: PushAnswer): string[] {
    const refused: string[] = [];
    for (const c of changed) {
      if (accepted(answer, c.ref)) this.synced.set(c.ref, c.sha);
      else refused.push(c.ref);
    }
    return refused;
  }

  private async changedLedgerRefs(): Promise<Array<{ ref: string; sha: string }>> {
    const now = await this.ledgerRefs();
    return [...now].filter(([ref, sha]) => this.synced.get(ref) !== sha).map(([ref, sha]) => ({ ref, sha }));
  }

  private async ledgerRefs(): Promise<Map<string, string>> {
    const out = (await git(['for-each-ref', '--format=%(refname) %(objectname)', LEDGER_REFS], { cwd: this.repo.path })).stdout;
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ') as [string, string]),
    );
  }

  /** Fetches and pushes through one mirror take turns. */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** Compare-and-swap on the server: the push of `ref` goes through only if it is still at `expected` (absent for null). */
function lease(ref: string, expected: string | null): string[] {
  return [`--force-with-lease=${ref}:${expected ?? ''}`];
}

/** Porcelain flags: ' ' fast-forward, '+' forced, '*' new, '=' already there; '!' refused. */
function accepted(answer: PushAnswer, ref: string): boolean {
  const line = answer.lines.find((l) => l.ref === ref);
  return line ? [' ', '+', '*', '='].includes(line.flag) : answer.all;
}
