import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import { git } from '../git/git.js';

/** The pre-gate's size limits, as the manifest sets them. */
export interface SizeLimits {
  maxFileBytes: number;
  maxChangeBytes: number;
}

/** One file the agent wrote or changed, with its size on disk (a sparse file counts its full length). */
interface WrittenFile {
  path: string;
  size: number;
}

/**
 * Throws `size-limit` when what `git add` would take from the workspace is too large to read, before
 * git reads a byte of it: a 2 GB sparse file or two 300 MB files would otherwise be hashed into the
 * world's object store (and kept there through the ledger), and a diff built from them. Only sizes
 * are read: `ls-files --others` for new files (ignored ones excluded, as `git add` excludes them)
 * and `lstat` for tracked files whose size differs from the base's blob (or, with `statIndex`, that
 * `ls-files --modified` names).
 * `ctx` is the git invocation collectCandidateTree uses (world git dir, workspace tree, private index).
 */
export async function checkWorkspaceSizes(
  ctx: { args: string[]; cwd: string; env: Record<string, string>; dir: string; base: string; statIndex?: boolean },
  limits: SizeLimits,
): Promise<void> {
  const opts = { cwd: ctx.cwd, env: ctx.env };
  // An index with the checkout's stat data knows which tracked files changed: one process, whatever the size of the base.
  const listed = ctx.statIndex ? ['--others', '--modified'] : ['--others'];
  const untracked = (await git([...ctx.args, 'ls-files', '-z', ...listed, '--exclude-standard'], opts)).stdout.split('\0').filter(Boolean);
  const tracked = ctx.statIndex ? new Map<string, number>() : await blobSizes(ctx.args, opts, ctx.base);
  const written: WrittenFile[] = [];
  for (const path of untracked) {
    const size = await sizeOf(join(ctx.dir, path));
    if (size !== null) written.push({ path, size });
  }
  for (const [path, baseSize] of tracked) {
    const size = await sizeOf(join(ctx.dir, path));
    if (size !== null && size !== baseSize) written.push({ path, size });
  }
  // Only what no limit could let through stops here (a file over the whole change's limit, or a
  // total over it); a file over the per-file limit alone is still read, so the pre-gate judges
  // the change with its other rules first and names the reason it always names.
  const large = written.filter((f) => f.size > Math.max(limits.maxFileBytes, limits.maxChangeBytes));
  if (large.length > 0) {
    const shown = large
      .slice(0, 3)
      .map((f) => `${showPath(f.path)} (${f.size} bytes)`)
      .join(', ');
    throw sizeLimit(
      large.map((f) => f.path),
      `${large.length} ${large.length === 1 ? 'file' : 'files'} over the limit of ${limits.maxFileBytes} bytes per file: ${shown}${large.length > 3 ? ` and ${large.length - 3} more` : ''}; keep generated or binary artefacts out of the world (or in .gitignore)`,
    );
  }
  const total = written.reduce((sum, f) => sum + f.size, 0);
  if (total > limits.maxChangeBytes) {
    throw sizeLimit(
      written.map((f) => f.path),
      `the change writes ${total} bytes in total, over the limit of ${limits.maxChangeBytes}; split the task or leave generated files out`,
    );
  }
}

/** Each regular file of the base with its blob size (`ls-tree -l`: sizes without reading blobs). */
async function blobSizes(args: string[], opts: { cwd: string; env: Record<string, string> }, base: string): Promise<Map<string, number>> {
  const out = (await git([...args, 'ls-tree', '-r', '-l', '-z', base], opts)).stdout;
  const sizes = new Map<string, number>();
  for (const line of out.split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [, type = '', , size = ''] = line.slice(0, tab).split(/\s+/);
    if (type === 'blob') sizes.set(line.slice(tab + 1), Number(size));
  }
  return sizes;
}

/** As the pre-gate shows a path: JSON-quoted when it holds spaces, quotes or control characters. */
function showPath(path: string): string {
  return /^[\w./@+=,~-]+$/.test(path) ? path : JSON.stringify(path);
}

async function sizeOf(path: string): Promise<number | null> {
  const info = await lstat(path).catch(() => null);
  return info && (info.isFile() || info.isSymbolicLink()) ? info.size : null;
}

function sizeLimit(paths: string[], message: string): GenesisError & { paths: string[] } {
  return Object.assign(new GenesisError('size-limit', message, { hint: 'the change was not read: nothing of it entered the world' }), { paths });
}
