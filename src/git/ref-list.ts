import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from './git.js';

/** A ref and the object it points at. */
export interface ListedRef {
  ref: string;
  sha: string;
}

const OID = /^[0-9a-f]{40}$/;

/**
 * The refs under `prefix` (which ends in '/'), sorted by name, as `git for-each-ref` lists them,
 * read from git's files ref store without a process: the loose ref files first, then
 * `packed-refs` (git writes a packed ref before it removes the loose file, so a ref being packed
 * meanwhile is found in one or the other). Anything else (a reftable store, a symbolic ref, a
 * file that does not read as an object id) is left to `git for-each-ref`.
 */
export async function listRefs(repo: string, prefix: string): Promise<ListedRef[]> {
  if (!prefix.startsWith('refs/') || !prefix.endsWith('/')) throw new Error(`not a ref prefix: ${prefix}`);
  const read = await readFilesStore(repo, prefix).catch(() => null);
  if (read) return read;
  const out = (await git(['for-each-ref', '--format=%(objectname) %(refname)', prefix], { cwd: repo })).stdout;
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ sha: line.slice(0, line.indexOf(' ')), ref: line.slice(line.indexOf(' ') + 1) }));
}

async function readFilesStore(repo: string, prefix: string): Promise<ListedRef[] | null> {
  if (process.env.GIT_DIR || process.env.GIT_COMMON_DIR) return null;
  const gitDir = (await stat(join(repo, '.git')).then(
    (s) => s.isDirectory(),
    () => false,
  ))
    ? join(repo, '.git')
    : repo;
  const config = await readFile(join(gitDir, 'config'), 'utf8');
  if (/^\s*refstorage\s*=/im.test(config)) return null;
  const refs = new Map<string, string>();
  if (!(await readLoose(gitDir, prefix, refs))) return null;
  const packed = await readFile(join(gitDir, 'packed-refs'), 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? '' : Promise.reject(e)));
  for (const line of packed.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const [sha = '', ref = ''] = line.split(' ');
    if (!OID.test(sha)) return null;
    // A loose ref overrides its packed copy.
    if (ref.startsWith(prefix) && !refs.has(ref)) refs.set(ref, sha);
  }
  return [...refs].map(([ref, sha]) => ({ ref, sha })).sort((a, b) => Buffer.compare(Buffer.from(a.ref), Buffer.from(b.ref)));
}

/** Reads the loose refs under `dir`; false when one is not a plain object id (a symbolic ref). */
async function readLoose(gitDir: string, dir: string, into: Map<string, string>): Promise<boolean> {
  const entries = await readdir(join(gitDir, dir), { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));
  for (const entry of entries) {
    const ref = `${dir}${entry.name}`;
    if (entry.isDirectory()) {
      if (!(await readLoose(gitDir, `${ref}/`, into))) return false;
      continue;
    }
    // A lock file is a write in progress: the ref it will become is still the file beside it (or packed).
    if (entry.name.endsWith('.lock')) continue;
    const text = await readFile(join(gitDir, ref), 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
    if (text === null) continue;
    const sha = text.trim();
    if (!OID.test(sha)) return false;
    into.set(ref, sha);
  }
  return true;
}
