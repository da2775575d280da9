import { lstat, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareMountPoints } from '../sandbox/gate/mount-points.js';
import type { DepsLayout } from './layout.js';

/**
 * Puts a set's layout into a tree on disk (a gate's work dir, a workspace): the output
 * directories and top-level links; the read-only views are left to the sandbox's `mounts`, or,
 * with `linkViews` (a workspace, where the agent may run unsandboxed), become symlinks into the
 * cache. Returns a problem when the tree already has an output path (a committed node_modules):
 * the set is never mixed with files from the tree.
 */
export async function applyDepsLayout(dir: string, layout: DepsLayout, options: { linkViews?: boolean } = {}): Promise<string | null> {
  const tops = new Set([...layout.dirs, ...layout.mounts.filter((m) => !layout.dirs.some((d) => m.target.startsWith(`${d}/`))).map((m) => m.target)]);
  for (const top of tops) {
    if (await lstat(join(dir, top)).catch(() => null)) {
      return `the tree has "${top}", which verify.deps.paths says the install produces; remove it from git (\`git rm -r --cached ${top}\`, add it to .gitignore) or fix verify.deps.paths`;
    }
  }
  for (const output of layout.dirs) {
    let path = dir;
    for (const part of output.split('/')) {
      path = join(path, part);
      const info = await lstat(path).catch(() => null);
      if (!info) await mkdir(path);
      else if (!info.isDirectory()) return `cannot lay out "${output}": ${path} is not a directory in the tree`;
    }
  }
  for (const link of layout.links) await symlink(link.linkTarget, join(dir, link.target));
  if (options.linkViews) await prepareMountPoints(dir, layout.mounts, true);
  return null;
}
