import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { GIT_IDENTITY, gitValue } from './git.js';

/** One entry of a tree Genesis writes: a file (100644 / 100755 / 120000) or a tree (40000). */
export interface TreeEntryInput {
  mode: string;
  name: string;
  sha: string;
}

/**
 * Where loose objects of a repository go when Genesis may write them itself, or null when git
 * must (a SHA-256 repository, a shared repository with its own permissions, an object directory
 * redirected by the environment): then each write is a git process, as before.
 */
async function looseObjectDir(repo: string): Promise<string | null> {
  if (process.env.GIT_OBJECT_DIRECTORY) return null;
  for (const gitDir of [repo, join(repo, '.git')]) {
    const config = await readFile(join(gitDir, 'config'), 'utf8').catch(() => null);
    if (config === null) continue;
    if (/^\s*(objectformat|sharedrepository)\s*=/im.test(config)) return null;
    const objects = join(gitDir, 'objects');
    return (await stat(objects).then(
      (s) => s.isDirectory(),
      () => false,
    ))
      ? objects
      : null;
  }
  return null;
}

/**
 * Writes an object into the repository's object store and returns its id: the loose-object format
 * git itself writes (zlib of "<type> <size>\0<content>", named by its SHA-1), through a temporary
 * file and a hard link, so a reader never sees half an object and an existing one is left as it
 * is. No process: this is what makes a ledger write cost no git process.
 */
export async function writeObject(repo: string, type: 'blob' | 'tree' | 'commit', content: Buffer): Promise<string> {
  const dir = await looseObjectDir(repo);
  if (dir === null) return gitValue(['hash-object', '-w', '-t', type, '--literally', '--stdin'], { cwd: repo, input: content });
  const body = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
  const sha = createHash('sha1').update(body).digest('hex');
  const fanout = join(dir, sha.slice(0, 2));
  const path = join(fanout, sha.slice(2));
  if (
    await stat(path).then(
      () => true,
      () => false,
    )
  )
    return sha;
  await mkdir(fanout, { recursive: true });
  const tmp = join(fanout, `tmp_obj_genesis_${randomBytes(6).toString('hex')}`);
  await writeFile(tmp, deflateSync(body), { mode: 0o444 });
  try {
    await link(tmp, path);
  } catch (error) {
    // Another writer stored the same object first: same name, same content.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(tmp, { force: true });
  }
  return sha;
}

/** A tree of the given entries (file names without '/'), sorted as git sorts them. */
export async function writeTree(repo: string, entries: readonly TreeEntryInput[]): Promise<string> {
  const key = (e: TreeEntryInput) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  const parts: Buffer[] = [];
  for (const e of sorted) {
    if (e.name.includes('/') || e.name.includes('\0') || e.name === '') throw new Error(`not a tree entry name: ${JSON.stringify(e.name)}`);
    parts.push(Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex'));
  }
  return writeObject(repo, 'tree', Buffer.concat(parts));
}

/**
 * A commit by Genesis (author and committer as `git commit-tree` would write them with Genesis's
 * identity, at the current second, UTC).
 */
export async function writeCommit(repo: string, input: { tree: string; parents: readonly string[]; message: string; now?: Date }): Promise<string> {
  const seconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const author = `${GIT_IDENTITY.GIT_AUTHOR_NAME} <${GIT_IDENTITY.GIT_AUTHOR_EMAIL}> ${seconds} +0000`;
  const committer = `${GIT_IDENTITY.GIT_COMMITTER_NAME} <${GIT_IDENTITY.GIT_COMMITTER_EMAIL}> ${seconds} +0000`;
  const lines = [`tree ${input.tree}`, ...input.parents.map((p) => `parent ${p}`), `author ${author}`, `committer ${committer}`, ''];
  return writeObject(repo, 'commit', Buffer.from(`${lines.join('\n')}\n${input.message}`));
}
