import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { git, gitValue } from '../git/git.js';
import { runScratchName, scratchEpisodeOf, scratchOwnerOf } from '../world/scratch-names.js';
import { discardTree } from '../sandbox/process/remove-tree.js';
import { checkWorkspaceSizes, type SizeLimits } from './workspace-sizes.js';
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

/** The private index collectCandidateTree reads the workspace with. */
function collectIndexOf(episodeDir: string): string {
  return join(episodeDir, 'collect.index');
}

/** A directory of its own for this run of the episode: a second run of it (a job handed out again) never shares or removes it. */
function newEpisodeDir(world: WorldRepo, episodeId: string): string {
  return join(world.scratchDir, 'episodes', runScratchName(episodeId));
}

export async function createWorkspace(world: WorldRepo, episodeId: string, base: string): Promise<Workspace> {
  const episodeDir = newEpisodeDir(world, episodeId);
  const dir = join(episodeDir, 'ws');
  await discardTree(episodeDir);
  // home/ is the agent's private HOME unless the manifest passes the real one through.
  await mkdir(join(episodeDir, 'home'), { recursive: true });
  // No template: the sample hooks, description and info/ it would copy are files to write now and remove later, used by nothing.
  const clone = ['clone', '--quiet', '--template=', '--shared'];
  // At the world's current head (the usual case), the clone checks it out itself: one git process, not two.
  const branch = await branchAt(world, base);
  if (branch) await git([...clone, '--branch', branch, world.path, dir], { cwd: episodeDir });
  else await git([...clone, '--no-checkout', world.path, dir], { cwd: episodeDir });
  // Without a branch, or when it moved between the look and the clone: the base, checked out by name.
  if (!branch || (await checkedOut(dir, branch)) !== base) await git(['checkout', '--quiet', '--detach', base], { cwd: dir });
  // The index the checkout wrote, with every file's stat data, taken before the agent runs (so it
  // is not the agent's): collecting the change then starts from it and hashes only what changed.
  await copyFile(join(dir, '.git', 'index'), collectIndexOf(episodeDir)).catch(() => undefined);
  return { episodeDir, dir };
}

/** More object stores than any world borrows through: a longer chain is not followed. */
const MAX_OBJECT_STORES = 8;

/**
 * The object stores a workspace of `world` borrows (its clone is shared): the world's own, and
 * those the world itself borrows from, read from the world's git directory, which no agent can
 * write. This, not the workspace's `.git/objects/info/alternates` (the agent's to rewrite), is what
 * an agent sandbox shows read-only, so that git in the workspace sees a whole repository.
 */
export async function borrowedObjectStores(world: WorldRepo): Promise<string[]> {
  const stores: string[] = [];
  const queue = [join(world.path, 'objects')];
  while (queue.length > 0 && stores.length < MAX_OBJECT_STORES) {
    const store = queue.shift()!;
    if (stores.includes(store)) continue;
    stores.push(store);
    const text = await readFile(join(store, 'info', 'alternates'), 'utf8').catch(() => '');
    for (const line of text.split('\n').map((l) => l.trim())) {
      if (line !== '' && !line.startsWith('#')) queue.push(isAbsolute(line) ? line : resolve(store, line));
    }
  }
  return stores;
}

/** The branch the world's HEAD names, when it points at `base` now; else null. */
async function branchAt(world: WorldRepo, base: string): Promise<string | null> {
  const head = await readFile(join(world.path, 'HEAD'), 'utf8').catch(() => '');
  const ref = /^ref: refs\/heads\/(\S+)\n?$/.exec(head)?.[1];
  if (!ref) return null;
  return (await world.resolveRef(`refs/heads/${ref}`)) === base ? ref : null;
}

/** The commit a fresh clone's branch points at (its loose ref, or its line in packed-refs), or null. */
async function checkedOut(dir: string, branch: string): Promise<string | null> {
  const gitDir = join(dir, '.git');
  const head = await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => '');
  if (head.trim() !== `ref: refs/heads/${branch}`) return null;
  const loose = await readFile(join(gitDir, 'refs', 'heads', branch), 'utf8').catch(() => null);
  if (loose !== null) return loose.trim();
  const packed = await readFile(join(gitDir, 'packed-refs'), 'utf8').catch(() => '');
  return new RegExp(`^([0-9a-f]{40,64}) refs/heads/${branch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(packed)?.[1] ?? null;
}

/**
 * Removes the episode's directory, whatever depth or permissions the agent left in it; never
 * throws (see discardTree): the episode's verdict is reached before and does not depend on it.
 * Resolves to false when something was left on disk.
 */
export async function removeWorkspace(workspace: Workspace): Promise<boolean> {
  return discardTree(workspace.episodeDir);
}

/**
 * Removes episode and gate directories left behind by a crash, but those of the episodes in
 * `keep` (matched by owner: every run of a kept episode stays). Only call it when no other episode
 * of this world can be running on this machine (at the start of `genesis run`).
 */
export async function removeStaleWorkspaces(world: WorldRepo, keep: ReadonlySet<string> | ((owner: string) => boolean) = new Set()): Promise<number> {
  const kept = typeof keep === 'function' ? keep : (owner: string) => keep.has(owner);
  let removed = 0;
  // Gate dirs too: a gate cut short by the same crash leaves one, and a tree moved aside waits in .trash.
  for (const root of [join(world.scratchDir, 'episodes'), join(world.scratchDir, 'gates')]) {
    const names = await readdir(root).catch(() => [] as string[]);
    const stale = names.filter((name) => !kept(scratchOwnerOf(name)));
    // One at a time: each may be a deep tree handed to `rm -rf`, and a machine has few cores.
    for (const name of stale) if (await discardTree(join(root, name))) removed += 1;
  }
  return removed;
}

/**
 * With workers elsewhere (distributed), what a killed worker left of episodes already closed: a run
 * of a closed episode is discarded anyway, so its directories may go even if one still works.
 * Directories of open episodes and of no episode (init, amend) stay.
 */
export async function removeClosedEpisodeDirs(world: WorldRepo, isClosed: (episodeId: string) => boolean): Promise<number> {
  return removeStaleWorkspaces(world, (owner) => owner.startsWith('.') || !isClosed(scratchEpisodeOf(owner)));
}

/**
 * Reads what the agent left in the working tree (committed or not) as a tree in the world's
 * object store. Git runs with the world's own git dir and a private index, so nothing the agent
 * wrote into the workspace's .git (hooks, config, filters, fsmonitor) is ever read.
 */
export async function collectCandidateTree(
  world: WorldRepo,
  workspace: Workspace,
  base: string,
  exclude: readonly string[] = [],
  limits?: SizeLimits,
): Promise<string> {
  const indexFile = collectIndexOf(workspace.episodeDir);
  const env = { GIT_INDEX_FILE: indexFile };
  const opts = { cwd: world.path, env };
  // `exclude`: the dependency outputs Genesis linked in (verify.deps.paths), never part of a change.
  // As ignore rules, not pathspecs: git refuses an exclude pathspec that .gitignore also names.
  let excludesFile = '/dev/null';
  if (exclude.length > 0) {
    excludesFile = join(workspace.episodeDir, 'collect.exclude');
    await writeFile(excludesFile, exclude.map((p) => `/${p}\n`).join(''));
  }
  const ctx = ['--git-dir', world.path, '--work-tree', workspace.dir, '-c', `core.excludesFile=${excludesFile}`, '-c', 'core.autocrlf=false'];
  // Without the checkout's own index (a workspace made another way), the base's tree with no stat data: add then hashes every file.
  const statIndex = await stat(indexFile).then(
    (st) => st.isFile(),
    () => false,
  );
  if (!statIndex) await git([...ctx, 'read-tree', base], opts);
  // Sizes first, from the file system: nothing over the limits is ever read into the world.
  if (limits) await checkWorkspaceSizes({ args: ctx, cwd: world.path, env, dir: workspace.dir, base, statIndex }, limits);
  // .gitignore is honoured on purpose: dependencies an agent installed are not part of its change.
  await git([...ctx, 'add', '--all', '--', '.'], opts);
  return gitValue([...ctx, 'write-tree'], opts);
}
