import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { git } from '../git/git.js';
import type { WorldRepo } from './world-repo.js';
import { LocalWorld } from './local-world.js';

/**
 * A world as a worker sees it. On shared storage (a path) the worker works in the world itself;
 * behind a git URL it keeps a local mirror, fetches before each episode and pushes the episode's
 * ledger ref (which carries the candidate commit with it) afterwards.
 */
export interface WorkerWorld {
  repo: WorldRepo;
  /** Brings the accepted history and the ledger up to date. */
  sync(): Promise<void>;
  /** Makes an episode's record and candidate visible where the scheduler reads them. */
  publish(episodeId: string): Promise<void>;
  /** Makes any ref of the world's (a verification record) visible where the scheduler reads it. */
  publishRef?(ref: string): Promise<void>;
}

const FETCH_REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/genesis/*:refs/genesis/*'];

/** Git URLs (`ssh://`, `https://`, `file://`, `user@host:path`) get a mirror; paths are used in place. */
export function isGitUrl(remote: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(remote) || (/^[^/]+@[^/:]+:/.test(remote) && !isAbsolute(remote));
}

export async function openWorkerWorld(remote: string, cacheDir: string): Promise<WorkerWorld> {
  if (!isGitUrl(remote)) {
    const repo = await LocalWorld.open(remote);
    return { repo, sync: async () => undefined, publish: async () => undefined };
  }
  const mirror = join(cacheDir, `${createHash('sha1').update(remote).digest('hex').slice(0, 16)}.git`);
  if (!(await stat(join(mirror, 'HEAD')).catch(() => null))) await createMirror(cacheDir, mirror);
  const repo = LocalWorld.at(mirror);
  return {
    repo,
    sync: () => serialized(mirror, () => git(['fetch', '--quiet', '--no-tags', remote, ...FETCH_REFSPECS], { cwd: mirror }).then(() => undefined)),
    publish: (id) =>
      serialized(mirror, () =>
        git(['push', '--quiet', remote, `+refs/genesis/episodes/${id}:refs/genesis/episodes/${id}`], { cwd: mirror }).then(() => undefined),
      ),
    publishRef: (ref) => serialized(mirror, () => git(['push', '--quiet', remote, `+${ref}:${ref}`], { cwd: mirror }).then(() => undefined)),
  };
}

/**
 * A mirror appears whole or not at all: made under a name of its own, then renamed into place. Two
 * jobs of a worker (or two workers sharing a cache) opening a new world at once saw the mirror's
 * directory while `git init` was still filling it, and their fetch failed with "not a git repository".
 * An empty directory left where the mirror goes (a crash at that moment) is replaced by the rename.
 */
async function createMirror(cacheDir: string, mirror: string): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const making = `${mirror}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await git(['init', '--quiet', '--bare', making], { cwd: cacheDir });
  // Another job's rename got there first: theirs is as good as ours.
  await rename(making, mirror).catch(async (cause: NodeJS.ErrnoException) => {
    await rm(making, { recursive: true, force: true });
    if (cause.code !== 'ENOTEMPTY' && cause.code !== 'EEXIST') throw cause;
  });
}

/** Fetches into one mirror take its ref locks; concurrent episodes on a worker take turns. */
const chains = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const next = (chains.get(key) ?? Promise.resolve()).then(work, work);
  chains.set(
    key,
    next.catch(() => undefined),
  );
  return next;
}
