import { lstat, mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import type { SandboxMount } from '../sandbox.js';

/** The parts of a mount's target, or an error when it would leave the work dir. */
function targetParts(target: string): string[] {
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  if (isAbsolute(target) || parts.length === 0 || parts.includes('..')) {
    throw new GenesisError('sandbox-mount-invalid', `a sandbox mount target must be a path inside the work dir, got "${target}"`);
  }
  return parts;
}

/**
 * Creates what each mount needs in the host work dir: its parent directories and an empty
 * directory or file of the source's kind to mount over. A parent that is a symlink (which a
 * candidate's tree could hold) is refused rather than followed out of the work dir. With
 * `asLinks` (the `none` sandbox, which cannot mount), the target becomes a symlink to the source.
 */
export async function prepareMountPoints(workDir: string, mounts: readonly SandboxMount[], asLinks = false): Promise<void> {
  // Read side by side: a dependency set brings a mount per package, and each read alone costs a turn of the thread pool.
  const sources = await Promise.all(mounts.map((mount) => lstat(mount.source).catch(() => null)));
  // Parents already found (or made) to be directories by this call: packages share theirs (node_modules).
  const directories = new Set<string>();
  for (const [index, mount] of mounts.entries()) {
    const parts = targetParts(mount.target);
    let dir = workDir;
    for (const part of parts.slice(0, -1)) {
      dir = join(dir, part);
      if (directories.has(dir)) continue;
      const info = await lstat(dir).catch(() => null);
      if (!info) await mkdir(dir);
      else if (!info.isDirectory())
        throw new GenesisError('sandbox-mount-invalid', `cannot mount at ${mount.target}: ${dir} is not a directory in the work dir`);
      directories.add(dir);
    }
    const path = join(workDir, ...parts);
    const existing = await lstat(path).catch(() => null);
    if (asLinks && existing?.isSymbolicLink() && (await readlink(path)) === mount.source) continue;
    if (existing?.isSymbolicLink()) throw new GenesisError('sandbox-mount-invalid', `cannot mount at ${mount.target}: the work dir has a symlink there`);
    // A bind follows a source that is a link, on the host side: a cache entry an install shaped could point at /.
    const source = sources[index];
    if (!source) throw new GenesisError('sandbox-mount-missing', `the mount source ${mount.source} does not exist`);
    if (source.isSymbolicLink()) throw new GenesisError('sandbox-mount-invalid', `the mount source ${mount.source} is a symlink; a mount never follows one`);
    if (asLinks) {
      if (existing) await rm(path, { recursive: true, force: true });
      await symlink(mount.source, path);
    } else if (!existing) {
      if (source.isDirectory()) await mkdir(path);
      else await writeFile(path, '');
      // A later mount's parent may be this one's target (a directory made just now).
      if (source.isDirectory()) directories.add(path);
    }
  }
}
