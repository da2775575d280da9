import { chmod, lutimes, mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readObject, resolveObject } from '../object-reader.js';
import { parseTree } from './entries.js';

/** Past these a tree is left to `git archive | tar`, which stream it (a large blob is never held in memory). */
const MAX_FILES = 1000;
const MAX_BYTES = 16 * 1024 * 1024;
/** What `git archive` writes for each kind of entry (tar.umask 002); tar as root keeps it, as anyone else takes the umask off. */
const FILE_MODES: Record<string, number> = { '100644': 0o664, '100755': 0o775 };
const DIR_MODE = 0o775;
/** Settings of the world's own config under which `git archive` writes files differently (line endings, filters, modes). */
const ARCHIVE_SETTINGS = /autocrlf|\beol\b|attributesfile|umask|\[filter/i;

interface Planned {
  dirs: string[];
  files: Array<{ path: string; mode: string; sha: string }>;
}

/**
 * Writes a small tree into `dir` (an empty directory) as `git archive | tar -x --no-same-owner`
 * writes it (the same modes, links and empty directories for submodules), but through the world's
 * long-lived cat-file (object-reader.ts): no process. Resolves false, having written nothing,
 * for a tree it leaves to git archive: more than MAX_FILES files or MAX_BYTES bytes, a
 * .gitattributes anywhere or settings in the world's config that change what git archive writes
 * (export-ignore, export-subst, line endings), or a name git would not check out (`.git`, `..`,
 * a slash, a repeated name, bytes that are not UTF-8), whose handling stays git's and tar's.
 *
 * Every entry, and `dir` itself, gets `mtime`, as git archive stamps one time on every entry:
 * two writes of a tree with the same stamp are alike to the second, as `cp -a` copies are.
 */
export async function writeSmallTree(repo: string, tree: string, dir: string, mtime: Date = new Date()): Promise<boolean> {
  if (await changesArchive(repo)) return false;
  const plan = await planTree(repo, tree);
  if (!plan) return false;
  const root = process.getuid?.() === 0;
  for (const path of plan.dirs) {
    await mkdir(join(dir, path), { mode: DIR_MODE });
    if (root) await chmod(join(dir, path), DIR_MODE);
  }
  await Promise.all(
    plan.files.map(async (file) => {
      const blob = await readObject(repo, file.sha);
      if (blob?.type !== 'blob') throw new Error(`${file.sha} is not a blob`);
      const target = join(dir, file.path);
      if (file.mode === '120000') return symlink(blob.content, target);
      const mode = FILE_MODES[file.mode]!;
      // 'wx': never through a link or over an entry already written.
      await writeFile(target, blob.content, { mode, flag: 'wx' });
      if (root) await chmod(target, mode);
    }),
  );
  await stampTree(dir, plan, mtime);
  return true;
}

/** Files and links first, then directories deepest first and `dir` last: writing an entry changes its directory's time. */
async function stampTree(dir: string, plan: Planned, mtime: Date): Promise<void> {
  await Promise.all(plan.files.map((file) => lutimes(join(dir, file.path), mtime, mtime)));
  for (const path of [...plan.dirs].reverse()) await utimes(join(dir, path), mtime, mtime);
  await utimes(dir, mtime, mtime);
}

/** The directories (parents first, submodules as empty directories) and files of a tree, or null when it is not one to write here. */
async function planTree(repo: string, tree: string): Promise<Planned | null> {
  const plan: Planned = { dirs: [], files: [] };
  let level: Array<{ prefix: string; sha: string }> = [{ prefix: '', sha: `${tree}^{tree}` }];
  while (level.length > 0) {
    const objects = await Promise.all(level.map((t) => readObject(repo, t.sha)));
    const next: Array<{ prefix: string; sha: string }> = [];
    for (const [i, object] of objects.entries()) {
      if (object?.type !== 'tree') return null;
      const entries = parseTree(object.content);
      if (new Set(entries.map((e) => e.name)).size !== entries.length) return null;
      for (const entry of entries) {
        if (!isPlainName(entry.name)) return null;
        const path = `${level[i]!.prefix}${entry.name}`;
        if (entry.mode === '40000') {
          plan.dirs.push(path);
          next.push({ prefix: `${path}/`, sha: entry.sha });
        } else if (entry.mode === '160000') plan.dirs.push(path);
        else if (entry.mode in FILE_MODES || entry.mode === '120000') plan.files.push({ path, mode: entry.mode, sha: entry.sha });
        else return null;
      }
    }
    if (plan.files.length > MAX_FILES) return null;
    level = next;
  }
  const sizes = await Promise.all(plan.files.map((f) => resolveObject(repo, f.sha)));
  if (sizes.some((s) => s?.type !== 'blob')) return null;
  if (sizes.reduce((sum, s) => sum + (s?.size ?? 0), 0) > MAX_BYTES) return null;
  return plan;
}

function isPlainName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !/^\.git(attributes)?$/i.test(name) && !name.includes('\uFFFD');
}

/** True when the world's own settings make git archive write something other than the blobs as stored. */
async function changesArchive(repo: string): Promise<boolean> {
  const [config, attributes] = await Promise.all([
    readFile(join(repo, 'config'), 'utf8').catch(() => ''),
    stat(join(repo, 'info', 'attributes')).then(
      () => true,
      () => false,
    ),
  ]);
  return attributes || ARCHIVE_SETTINGS.test(config);
}
