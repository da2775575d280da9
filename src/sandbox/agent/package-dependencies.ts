import { readFile, realpath } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';

/** More packages than any agent CLI has: a tree this large is not walked further. */
const MAX_PACKAGES = 5_000;

/**
 * The directories outside the npm package at `root` that hold packages of its dependency closure
 * (`dependencies` and `optionalDependencies`, resolved as Node resolves them: the nearest
 * `node_modules` up the tree). A global install nests them in the package, so there are none; a
 * local install hoists them next to it (Codex's native binary, `@openai/codex-linux-x64`, beside
 * `@openai/codex`), and the answer is that `node_modules`. Optional dependencies that were not
 * installed (other platforms) are skipped.
 */
export async function dependencyDirsOutside(root: string): Promise<string[]> {
  const dirs = new Set<string>();
  const seen = new Set<string>([root]);
  const queue = [root];
  while (queue.length > 0 && seen.size < MAX_PACKAGES) {
    const pkg = queue.shift()!;
    for (const name of await dependencyNames(pkg)) {
      const found = await resolvePackage(name, pkg);
      if (found === null || seen.has(found)) continue;
      seen.add(found);
      queue.push(found);
      if (!found.startsWith(root + sep)) dirs.add(nodeModulesOf(found, name));
    }
  }
  return [...dirs];
}

async function dependencyNames(pkg: string): Promise<string[]> {
  try {
    const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as Record<string, unknown>;
    const names = (field: unknown) => (field && typeof field === 'object' ? Object.keys(field) : []);
    return [...new Set([...names(manifest.dependencies), ...names(manifest.optionalDependencies)])];
  } catch {
    return [];
  }
}

/** Where `name` resolves from the package at `from`: its own node_modules, then each parent's. */
async function resolvePackage(name: string, from: string): Promise<string | null> {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith(`${sep}node_modules`)) {
      const candidate = join(dir, 'node_modules', name);
      const real = await realpath(join(candidate, 'package.json')).then(
        (file) => dirname(file),
        () => null,
      );
      if (real !== null) return real;
    }
    if (dir === dirname(dir)) return null;
  }
}

/** The `node_modules` directory a resolved package sits in (above its scope for `@scope/name`). */
function nodeModulesOf(pkg: string, name: string): string {
  return name.startsWith('@') ? dirname(dirname(pkg)) : dirname(pkg);
}
