import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveLinkInside } from '../sandbox/gate/contained-path.js';

/**
 * Why the outputs an install left under `work` cannot be stored as a set, or null. An install
 * runs the world's scripts, and the set is later bound into gates and workspaces from the host
 * side: an output that is a link (`node_modules -> ../../../..`), sits behind one, or holds a
 * link that leads out of the outputs would have those binds (and every host-side walk of the
 * cache) follow it to wherever it points. Links inside the outputs (pnpm's, npm's `.bin`) stay.
 */
export async function findOutputLinkProblem(work: string, paths: readonly string[]): Promise<string | null> {
  for (const path of paths) {
    const parts = path.split('/');
    for (const [i] of parts.entries()) {
      const prefix = parts.slice(0, i + 1).join('/');
      const info = await lstat(join(work, prefix)).catch(() => null);
      if (!info) break;
      if (info.isSymbolicLink())
        return prefix === path ? `output "${path}" is a symlink` : `output "${path}" is reached through "${prefix}", which is a symlink`;
      if (!info.isDirectory()) break;
    }
  }
  for (const path of paths) {
    const problem = await findLeavingLink(work, path, paths);
    if (problem) return problem;
  }
  return null;
}

async function findLeavingLink(work: string, output: string, outputs: readonly string[]): Promise<string | null> {
  const pending = [output];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(join(work, dir), { withFileTypes: true });
    } catch {
      continue; // a file, or absent
    }
    for (const entry of entries) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) pending.push(rel);
      else if (entry.isSymbolicLink()) {
        const target = await readlink(join(work, rel));
        const lands = resolveLinkInside(rel, target);
        if (lands === null || !outputs.some((o) => lands === o || lands.startsWith(`${o}/`)))
          return `output "${rel}" is a symlink out of the set (to ${JSON.stringify(target)})`;
      }
    }
  }
  return null;
}
