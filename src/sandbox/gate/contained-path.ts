import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The parts of a path relative to a root, or null when it is not one (absolute, empty, or
 * climbing with `..`).
 */
export function relativeParts(rel: string): string[] | null {
  if (rel.startsWith('/')) return null;
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  return parts.length === 0 || parts.includes('..') ? null : parts;
}

/**
 * `lstat` of `rel` under `root`, reached one component at a time: null when it is missing, or
 * when anything on the way is a symbolic link or not a directory. A candidate or an install can
 * shape what lies under a work dir, a workspace or a cache entry (`reports -> /etc`), and a host
 * path built by joining would follow such a link out as Genesis's user; this never does. The
 * last component is not followed either: the caller sees a link as a link.
 */
export async function lstatInside(root: string, rel: string): Promise<Stats | null> {
  const parts = relativeParts(rel);
  if (!parts) return null;
  let path = root;
  for (const [i, part] of parts.entries()) {
    path = join(path, part);
    const info = await lstat(path).catch(() => null);
    if (!info) return null;
    if (i === parts.length - 1) return info;
    if (!info.isDirectory()) return null;
  }
  return null;
}

/** Whether the way to `rel` under `root` passes a symbolic link before its last component (checked without following any). */
export async function passesLink(root: string, rel: string): Promise<boolean> {
  const parts = relativeParts(rel) ?? [];
  let path = root;
  for (const part of parts.slice(0, -1)) {
    path = join(path, part);
    const info = await lstat(path).catch(() => null);
    if (!info?.isDirectory()) return info?.isSymbolicLink() ?? false;
  }
  return false;
}

/**
 * Where a link at `linkPath` (relative to a root) with target `target` leads, relative to the
 * root ('' for the root itself), or null when it may leave the root. Only a relative target of
 * the form `../../a/b` (every `..` first, then names) that does not climb above the root is
 * followed: a `..` after a name is refused, since the name could be another link whose physical
 * parent is not its lexical one (`l/../etc` with `l -> ../..`).
 */
export function resolveLinkInside(linkPath: string, target: string): string | null {
  if (target.startsWith('/')) return null;
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  const names = parts.findIndex((p) => p !== '..');
  const climbs = names < 0 ? parts.length : names;
  if (parts.slice(climbs).includes('..')) return null;
  const dir = linkPath.split('/').filter(Boolean).slice(0, -1);
  if (climbs > dir.length) return null;
  return [...dir.slice(0, dir.length - climbs), ...parts.slice(climbs)].join('/');
}
