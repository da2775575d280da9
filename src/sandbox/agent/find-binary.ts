import { constants } from 'node:fs';
import { access, lstat, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * The executable `name` resolves to on `path` (a PATH value), as a shell would find it, or null.
 * A name with a slash is taken as a path, relative to `cwd`.
 */
export async function resolveOnPath(name: string, path: string | undefined, cwd: string): Promise<string | null> {
  const candidates = name.includes('/')
    ? [resolve(cwd, name)]
    : (path ?? '')
        .split(delimiter)
        .filter(isAbsolute)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Directories every sandboxed agent sees anyway (the system's programs and configuration). */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

export function underSystemDirs(path: string): boolean {
  return SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(dir + sep));
}

let cachedSystemDirBinds: Promise<string[]> | undefined;

/**
 * bubblewrap arguments that show the system dirs as they are on the host, read-only: a symlink
 * (/bin -> usr/bin on a merged-/usr system) stays a symlink. Read once per process.
 */
export function systemDirBinds(): Promise<string[]> {
  cachedSystemDirBinds ??= (async () => {
    const args: string[] = [];
    for (const dir of SYSTEM_DIRS) {
      const info = await lstat(dir).catch(() => null);
      if (!info) continue;
      if (info.isSymbolicLink()) args.push('--symlink', await readlink(dir), dir);
      else args.push('--ro-bind', dir, dir);
    }
    return args;
  })();
  return cachedSystemDirBinds;
}

/**
 * The directory an agent binary needs to run, for a binary installed outside the system dirs:
 * its npm package (`…/node_modules/@scope/pkg`), its Python virtualenv (the nearest ancestor with
 * a `pyvenv.cfg`), else the directory it is in. Resolved through symlinks, since `bin/claude` is a
 * link into the package.
 */
export async function installRootOf(binary: string): Promise<string | null> {
  const real = await realpath(binary).catch(() => null);
  if (real === null || underSystemDirs(real)) return null;
  const parts = real.split(sep);
  const modules = parts.lastIndexOf('node_modules');
  if (modules >= 0 && modules + 1 < parts.length - 1) {
    const scoped = parts[modules + 1]!.startsWith('@');
    return parts.slice(0, modules + (scoped ? 3 : 2)).join(sep);
  }
  for (let dir = dirname(real); dir !== dirname(dir); dir = dirname(dir)) {
    if (
      await readFile(join(dir, 'pyvenv.cfg')).then(
        () => true,
        () => false,
      )
    )
      return dir;
  }
  return dirname(real);
}
