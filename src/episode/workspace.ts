import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { git, gitValue } from '../world/git.js';
import type { WorldRepo } from '../world/world-repo.js';

/**
 * An episode's private working copy at its base commit: a shared clone, so it borrows the world's
 * object store instead of copying it, and has a .git of its own that an agent may use freely
 * without ever touching the world's refs.
 */
export interface Workspace {
  /** The episode's scratch directory (prompt, index, logs); removed with the workspace. */
  episodeDir: string;
  /** The working tree the agent runs in. */
  dir: string;
}

export function episodeDirOf(world: WorldRepo, episodeId: string): string {
  return join(world.scratchDir, 'episodes', episodeId);
}

export async function createWorkspace(world: WorldRepo, episodeId: string, base: string): Promise<Workspace> {
  const episodeDir = episodeDirOf(world, episodeId);
  const dir = join(episodeDir, 'ws');
  await rm(episodeDir, { recursive: true, force: true });
  // home/ is the agent's private HOME unless the manifest passes the real one through.
  await mkdir(join(episodeDir, 'home'), { recursive: true });
  // Plain git, not simple-git: its completion wait adds ~50 ms to each silent command (bench/README.md).
  await git(['clone', '--quiet', '--shared', '--no-checkout', world.path, dir], { cwd: episodeDir });
  await git(['checkout', '--quiet', '--detach', base], { cwd: dir });
  return { episodeDir, dir };
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.episodeDir, { recursive: true, force: true });
}

/**
 * Removes episode directories left behind by a crash. Only call it when no episode of this world
 * can be running on this machine (at the start of `genesis run`).
 */
export async function removeStaleWorkspaces(world: WorldRepo, keep: ReadonlySet<string> = new Set()): Promise<number> {
  const root = join(world.scratchDir, 'episodes');
  const names = await readdir(root).catch(() => [] as string[]);
  const stale = names.filter((name) => !keep.has(name));
  await Promise.all(stale.map((name) => rm(join(root, name), { recursive: true, force: true })));
  return stale.length;
}

/**
 * Reads what the agent left in the working tree (committed or not) as a tree in the world's
 * object store. Git runs with the world's own git dir and a private index, so nothing the agent
 * wrote into the workspace's .git (hooks, config, filters, fsmonitor) is ever read.
 */
export async function collectCandidateTree(world: WorldRepo, workspace: Workspace, base: string): Promise<string> {
  const env = { GIT_INDEX_FILE: join(workspace.episodeDir, 'collect.index') };
  const opts = { cwd: world.path, env };
  const ctx = ['--git-dir', world.path, '--work-tree', workspace.dir, '-c', 'core.excludesFile=/dev/null', '-c', 'core.autocrlf=false'];
  await git([...ctx, 'read-tree', base], opts);
  // .gitignore is honoured on purpose: dependencies an agent installed are not part of its change.
  await git([...ctx, 'add', '--all', '--', '.'], opts);
  return gitValue([...ctx, 'write-tree'], opts);
}
