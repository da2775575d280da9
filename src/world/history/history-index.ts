import { appendFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AcceptedCommit } from './accepted-history.js';
import { doneTasksOf } from './done-tasks.js';
import { genesisStateDir } from '../genesis-state-dir.js';

/** What the index keeps of one commit: its first parent and the Genesis trailers Genesis decides on. */
export interface IndexedCommit {
  commit: string;
  parent: string | null;
  task: string | null;
  score: number | null;
  episode: string | null;
  verification: string | null;
  /** The task a reopen commit made pending again. */
  reopen: string | null;
}

/** Reads first-parent history with trailers, newest first: `rev` is a commit or a range (`a..b`). */
export type HistoryReader = (rev: string) => Promise<AcceptedCommit[]>;

const VERSION = 3;
const MEMO = 64;

/**
 * An incremental index of first-parent history: for every commit it has seen, the first parent
 * and the trailers (task, score, verification). Commits never change, so what it holds stays
 * true; it only ever learns the commits between the newest one it knows and the one asked about,
 * with one `git log <known>..<asked>`, and starts over from scratch when the commit asked about
 * does not lead back to one it knows (a forced push, a restore, a history rewritten by hand).
 * Invariant: every commit in it has its whole first-parent chain in it too.
 *
 * It is a cache of what `git log --first-parent` says, kept in memory and (best effort) in a file
 * under the world's git directory, so a new process starts warm. Audit never uses it: audit
 * reads the history itself.
 */
export class HistoryIndex {
  private readonly links = new Map<string, IndexedCommit>();
  /** The commit the last walk reached: the next walk stops where it is reachable. */
  private newest: string | null = null;
  private readonly doneMemo = new Map<string, ReadonlySet<string>>();
  /** Walks done so far: incremental ones and full rebuilds (for tests and the bench). */
  readonly stats = { walks: 0, rebuilds: 0 };

  constructor(
    private readonly readHistory: HistoryReader,
    private readonly file: string | null = null,
  ) {}

  /** Loads what an earlier process stored (lines whose chain is incomplete are dropped). */
  async load(): Promise<void> {
    if (!this.file) return;
    const text = await readFile(this.file, 'utf8').catch(() => '');
    const lines = text.split('\n');
    if (lines[0] !== JSON.stringify({ version: VERSION })) return;
    for (const line of lines.slice(1)) {
      const entry = parseLine(line);
      // A torn last line, or a link whose parent another process's rebuild dropped: the chain would be incomplete.
      if (!entry || (entry.parent !== null && !this.links.has(entry.parent))) continue;
      this.links.set(entry.commit, entry);
      this.newest = entry.commit;
    }
  }

  has(commit: string): boolean {
    return this.links.has(commit);
  }

  get size(): number {
    return this.links.size;
  }

  /** Makes sure `commit` (a full object id) and its whole first-parent chain are indexed. */
  async ensure(commit: string): Promise<void> {
    if (this.links.has(commit)) {
      // The next commit asked about most likely descends from this one: the walk to it starts here.
      this.newest = commit;
      return;
    }
    if (this.newest !== null) {
      const since = await this.readHistory(`${this.newest}..${commit}`).catch(() => null);
      const oldest = since?.at(-1);
      // The walk met the chain the index knows; reaching a root instead means the known head is not an ancestor.
      const joins = oldest?.parents[0] !== undefined && this.links.has(oldest.parents[0]);
      if (since && joins && since[0]?.commit === commit) {
        this.stats.walks++;
        await this.add(since, false);
        return;
      }
    }
    // The commit does not lead back to one the index knows: start over from the commit itself.
    this.stats.rebuilds++;
    const all = await this.readHistory(commit);
    this.links.clear();
    this.doneMemo.clear();
    await this.add(all, true);
  }

  /**
   * Adds a commit this process just wrote, whose first parent it knows (so the invariant holds):
   * when that commit becomes the head, the next question about it needs no walk (two git
   * processes). Whether the commit ever lands does not matter: commits never change. The walk
   * start (`newest`) stays, as a written commit may never land.
   */
  async learn(commit: AcceptedCommit): Promise<void> {
    const parent = commit.parents[0] ?? null;
    if (this.links.has(commit.commit) || (parent !== null && !this.links.has(parent))) return;
    const entry = toEntry(commit);
    this.links.set(entry.commit, entry);
    await this.store([entry], false).catch(() => undefined);
  }

  /** The indexed commit, or undefined. */
  get(commit: string): IndexedCommit | undefined {
    return this.links.get(commit);
  }

  /** Ids of the tasks done at `commit`: every Genesis-Task trailer on its first-parent chain not reopened since. */
  async doneAt(commit: string, tries = 2): Promise<Set<string>> {
    await this.ensure(commit);
    const walked: IndexedCommit[] = [];
    let base: ReadonlySet<string> = new Set();
    for (let at: string | null = commit; at !== null; ) {
      const memo = this.doneMemo.get(at);
      if (memo) {
        base = memo;
        break;
      }
      const link = this.links.get(at);
      // Another call rebuilt the index from an unrelated commit meanwhile: ask again.
      if (!link) return tries > 0 ? this.doneAt(commit, tries - 1) : doneTasksOf(await this.readHistory(commit));
      walked.push(link);
      at = link.parent;
    }
    const done = doneTasksOf(walked, base);
    this.remember(commit, done);
    // After a long walk, the parent's answer too: the next commit asked about is often a sibling
    // (another candidate on the same head), and then its walk stops one link down.
    const link = this.links.get(commit)!;
    if (walked.length > 1 && link.parent !== null && !this.doneMemo.has(link.parent)) this.remember(link.parent, doneTasksOf(walked.slice(1), base));
    return new Set(done);
  }

  private remember(commit: string, done: ReadonlySet<string>): void {
    if (this.doneMemo.size >= MEMO) this.doneMemo.delete(this.doneMemo.keys().next().value!);
    this.doneMemo.set(commit, done);
  }

  /** The first-parent chain of `commit`, newest first (for readers that stop early, like the ratchet's floor). */
  async *chain(commit: string): AsyncGenerator<IndexedCommit> {
    await this.ensure(commit);
    for (let link = this.links.get(commit); link; link = link.parent === null ? undefined : this.links.get(link.parent)) yield link;
  }

  /** Adds a walk's commits (newest first as git prints them), oldest first, and stores them. */
  private async add(commits: readonly AcceptedCommit[], rebuilt: boolean): Promise<void> {
    const entries = [...commits].reverse().map(toEntry);
    for (const e of entries) this.links.set(e.commit, e);
    if (entries.length > 0) this.newest = entries.at(-1)!.commit;
    await this.store(entries, rebuilt).catch(() => undefined);
  }

  private async store(entries: IndexedCommit[], rebuilt: boolean): Promise<void> {
    if (!this.file || entries.length === 0) return;
    const lines = entries.map((e) => `${JSON.stringify([e.commit, e.parent, e.task, e.score, e.episode, e.verification, e.reopen])}\n`).join('');
    await mkdir(dirname(this.file), { recursive: true });
    const exists = await stat(this.file).then(
      () => true,
      () => false,
    );
    if (rebuilt || !exists) {
      // A rebuild replaces the file whole (through a rename: a reader sees the old one or the new one).
      const tmp = `${this.file}.${process.pid}.tmp`;
      await writeFile(
        tmp,
        `${JSON.stringify({ version: VERSION })}\n${[...this.links.values()].map((e) => JSON.stringify([e.commit, e.parent, e.task, e.score, e.episode, e.verification, e.reopen])).join('\n')}\n`,
      );
      await rename(tmp, this.file);
      return;
    }
    // One write per walk, oldest first: any prefix of the file keeps the invariant.
    await appendFile(this.file, lines);
  }
}

function toEntry(c: AcceptedCommit): IndexedCommit {
  return {
    commit: c.commit,
    parent: c.parents[0] ?? null,
    task: c.task,
    score: c.score,
    episode: c.episode,
    verification: c.verification ?? null,
    reopen: c.reopen ?? null,
  };
}

const OID = /^[0-9a-f]{40,64}$/;

function parseLine(line: string): IndexedCommit | null {
  if (line === '') return null;
  try {
    const v = JSON.parse(line) as unknown[];
    const [commit, parent, task, score, episode, verification, reopen] = v;
    const text = (x: unknown) => x === null || typeof x === 'string';
    if (!Array.isArray(v) || typeof commit !== 'string' || !OID.test(commit) || !(parent === null || (typeof parent === 'string' && OID.test(parent))))
      return null;
    if (!text(task) || !text(episode) || !text(verification) || !text(reopen) || !(score === null || typeof score === 'number')) return null;
    return {
      commit,
      parent: parent as string | null,
      task: task as string | null,
      score: score as number | null,
      episode: episode as string | null,
      verification: verification as string | null,
      reopen: reopen as string | null,
    };
  } catch {
    return null;
  }
}

/** Where a repository's index file lives: inside its git directory, which no work tree or mirror clone carries. */
export async function historyIndexFile(repo: string): Promise<string> {
  return join(await genesisStateDir(repo), 'history-index.jsonl');
}
