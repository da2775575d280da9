import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { GenesisError } from '../errors/genesis-error.js';
import { holdAlive, RepoProcessPool, spawnLongLivedGit, type RepoProcess } from './git-process.js';

/** An object as git stores it. */
export interface GitObject {
  sha: string;
  type: string;
  content: Buffer;
  /** The object's size in bytes (also known when the content was not asked for). */
  size?: number;
}

interface Pending {
  resolve: (value: GitObject | null) => void;
  reject: (error: Error) => void;
}

/**
 * One long-lived `git cat-file --batch` (or `--batch-check`, which answers without the content)
 * for a repository: each lookup is a line written to it, not a process. Names are anything git
 * resolves (`<sha>`, `refs/heads/main`, `<commit>^{tree}`, `<commit>:world.yaml`); refs are read
 * afresh on every lookup, and objects or packs written after it started are found. Lookups are
 * answered in the order they were asked.
 */
export class ObjectReader implements RepoProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  /** The header of the object whose content is still arriving. */
  private header: { sha: string; type: string; size: number } | null = null;
  private ended: Error | null = null;

  constructor(
    repo: string,
    private readonly withContent: boolean,
    onEnd: (reader: ObjectReader) => void,
  ) {
    this.child = spawnLongLivedGit(repo, ['cat-file', withContent ? '--batch' : '--batch-check']);
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.take(chunk));
    const end = (why: string) => {
      if (this.ended) return;
      this.ended = new GenesisError('git-failed', `git cat-file in ${repo} ended: ${why}${stderr.trim() ? `: ${stderr.trim()}` : ''}`, {
        hint: 'check that the world path is a git repository you can read',
      });
      for (const p of this.pending.splice(0)) p.reject(this.ended);
      onEnd(this);
    };
    this.child.on('error', (e) => end(e.message));
    this.child.on('close', (code, signal) => end(`exit ${code ?? signal}`));
    this.child.stdin.on('error', (e) => end(e.message));
  }

  /** The object a name resolves to, or null when it resolves to nothing. */
  read(name: string): Promise<GitObject | null> {
    if (this.ended) return Promise.reject(this.ended);
    if (/[\n\r]/.test(name) || name.length === 0) {
      // A caller's mistake, not git's: names Genesis builds are one line.
      return Promise.reject(new Error(`not an object name: ${JSON.stringify(name.slice(0, 80))}`));
    }
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) holdAlive(this.child, true);
      this.pending.push({ resolve, reject });
      this.child.stdin.write(`${name}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }

  private answer(value: GitObject | null): void {
    this.pending.shift()?.resolve(value);
    if (this.pending.length === 0) holdAlive(this.child, false);
  }

  private take(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (!this.header) {
        const eol = this.buffer.indexOf(0x0a);
        if (eol < 0) return;
        const line = this.buffer.subarray(0, eol).toString('utf8');
        this.buffer = this.buffer.subarray(eol + 1);
        const parts = line.split(' ');
        const size = Number(parts[2]);
        // "<name> missing", "<name> ambiguous": the name resolves to no one object.
        if (parts.length !== 3 || !/^[0-9a-f]{40,64}$/.test(parts[0]!) || !Number.isInteger(size)) {
          this.answer(null);
          continue;
        }
        if (!this.withContent) {
          this.answer({ sha: parts[0]!, type: parts[1]!, content: Buffer.alloc(0), size });
          continue;
        }
        this.header = { sha: parts[0]!, type: parts[1]!, size };
      }
      // The content, then one newline.
      if (this.buffer.length < this.header.size + 1) return;
      const content = Buffer.from(this.buffer.subarray(0, this.header.size));
      this.buffer = this.buffer.subarray(this.header.size + 1);
      const { sha, type } = this.header;
      this.header = null;
      this.answer({ sha, type, content });
    }
  }
}

const contents = new RepoProcessPool<ObjectReader>((repo) => new ObjectReader(repo, true, (r) => contents.forget(repo, r)));
const infos = new RepoProcessPool<ObjectReader>((repo) => new ObjectReader(repo, false, (r) => infos.forget(repo, r)));

/**
 * Reads an object through the repository's long-lived `cat-file --batch`. A process that died
 * (the repository was removed, git was killed) is replaced once.
 */
export async function readObject(repo: string, name: string): Promise<GitObject | null> {
  return withRetry(contents, repo, name);
}

/** The object id and type a name resolves to (no content), or null. */
export async function resolveObject(repo: string, name: string): Promise<{ sha: string; type: string; size: number } | null> {
  const found = await withRetry(infos, repo, name);
  return found ? { sha: found.sha, type: found.type, size: found.size ?? found.content.length } : null;
}

/** A blob's text at `<rev>:<path>` (or any name of a blob), or null. */
export async function readText(repo: string, name: string): Promise<string | null> {
  const found = await readObject(repo, name);
  return found && found.type === 'blob' ? found.content.toString('utf8') : null;
}

async function withRetry(pool: RepoProcessPool<ObjectReader>, repo: string, name: string): Promise<GitObject | null> {
  try {
    return await pool.get(repo).read(name);
  } catch (error) {
    if (!(error instanceof GenesisError) || error.code !== 'git-failed') throw error;
    return pool.get(repo).read(name);
  }
}
