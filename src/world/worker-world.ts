import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { git } from './git.js';
import { WorldRepo } from './world-repo.js';

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
    const repo = await WorldRepo.open(remote);
    return { repo, sync: async () => undefined, publish: async () => undefined };
  }
  const mirror = join(cacheDir, `${createHash('sha1').update(remote).digest('hex').slice(0, 16)}.git`);
  if (!(await stat(mirror).catch(() => null))) {
    await mkdir(cacheDir, { recursive: true });
    await git(['init', '--quiet', '--bare', mirror], { cwd: cacheDir });
  }
  const repo = WorldRepo.at(mirror);
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
