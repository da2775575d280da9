import { realpath, stat } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, sep } from 'node:path';
import { dependencyDirsOutside } from './package-dependencies.js';
import { installRootOf, resolveOnPath, underSystemDirs } from './find-binary.js';
import type { AgentSandboxSpec } from '../agent-sandbox.js';

/**
 * The host paths a sandboxed agent reads besides the system dirs, each at its own path:
 * - the spec's `readOnly` paths (the prompt file, the object stores the workspace borrows, which
 *   the caller knows from the world it cloned: never read out of the workspace, whose
 *   `.git/objects/info/alternates` the agent may rewrite between two launches);
 * - the files the command names by absolute path (`bash /opt/agents/my-agent.sh`: the agent's own
 *   program, which would otherwise be missing inside and fail as exit code 127);
 * - the PATH directories outside the system dirs, and the install root of the launched binary
 *   (its npm package or virtualenv), so a CLI installed with a version manager still runs, with
 *   the node_modules its dependencies were hoisted to by a local install (dependencyDirsOutside);
 *   not for a program in the workspace, which is seen there (and whose links are the tree's);
 * - the prefix of the Node running Genesis when it lives outside /usr, for `#!/usr/bin/env node`.
 * Paths that do not exist are left out. `hostPrograms: false` (a docker image that brings its own
 * programs) keeps only the first two.
 */
export async function agentReadOnlyPaths(argv: readonly string[], spec: AgentSandboxSpec, hostPrograms = true): Promise<string[]> {
  const paths = new Set<string>(spec.readOnly);
  for (const file of await filesNamedBy(argv, spec.workspace)) paths.add(file);
  if (hostPrograms) await addProgramPaths(paths, argv[0]!, spec);
  const existing: string[] = [];
  for (const path of paths) {
    if (
      await stat(path).then(
        () => true,
        () => false,
      )
    )
      existing.push(path);
  }
  return existing;
}

/** What it takes to run the host's programs outside /usr (skipped for an image with its own). */
async function addProgramPaths(paths: Set<string>, argv0: string, spec: AgentSandboxSpec): Promise<void> {
  for (const dir of (spec.env.PATH ?? '').split(delimiter)) {
    if (isAbsolute(dir) && !underSystemDirs(dir)) paths.add(dir);
  }
  const binary = await resolveOnPath(argv0, spec.env.PATH, spec.workspace);
  // A program in the workspace is seen there already; a link there is the tree's, never a way to a host directory.
  const inWorkspace = binary !== null && (binary === spec.workspace || binary.startsWith(spec.workspace + sep));
  const root = binary && !inWorkspace ? await installRootOf(binary) : null;
  if (root) {
    paths.add(root);
    // A local npm install hoists the package's own dependencies (a native binary among them) beside it.
    if (root.includes(`${sep}node_modules${sep}`)) for (const dir of await dependencyDirsOutside(root)) if (!underSystemDirs(dir)) paths.add(dir);
  }
  const nodePrefix = dirname(dirname(await realpath(process.execPath)));
  if (!underSystemDirs(nodePrefix) && nodePrefix !== '/') paths.add(nodePrefix);
}

/** The regular files of the host an argv names by absolute path, outside the system dirs and the workspace. */
export async function filesNamedBy(argv: readonly string[], workspace: string): Promise<string[]> {
  const files: string[] = [];
  for (const arg of argv) {
    if (!isAbsolute(arg) || underSystemDirs(arg) || arg === workspace || arg.startsWith(workspace + sep)) continue;
    if ((await stat(arg).catch(() => null))?.isFile()) files.push(arg);
  }
  return files;
}

/**
 * Orders binds so that a directory is mounted before anything inside it (a later bind over a
 * parent would hide the earlier child).
 */
export function parentsFirst<T extends { target: string }>(binds: readonly T[]): T[] {
  return [...binds].sort((a, b) => a.target.split('/').length - b.target.split('/').length || a.target.localeCompare(b.target));
}
