import { homedir } from 'node:os';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import type { EpisodeJob } from '../episode/episode-job.js';
import { SPECULATIVE_REF_PREFIX } from '../integrate/build-tip.js';
import type { VerificationQueue } from '../queue/verification-queue.js';
import type { EpisodeQueue } from '../queue/episode-queue.js';
import type { WorldManifest } from '../manifest/schema.js';
import { Publisher, type PublishEvent } from '../world/publisher.js';
import { redactUrl } from '../git/redact-url.js';
import { VERIFICATION_REF_PREFIX } from '../world/history/verification-ref.js';
import { openRemoteWorld, type RemoteWorld } from '../world/remote-world.js';
import { isGitUrl } from '../world/worker-world.js';
import type { WorldRepo } from '../world/world-repo.js';
import { LocalWorld } from '../world/local-world.js';

/** Where `genesis run` keeps mirrors of worlds behind git URLs. @default ~/.cache/genesis/worlds */
export function defaultCacheDir(): string {
  return process.env.GENESIS_CACHE_DIR ?? join(homedir(), '.cache', 'genesis', 'worlds');
}

/** A world opened for a run: a path, or a git URL behind a local mirror. */
export interface OpenedWorld {
  world: WorldRepo;
  /** Set when the world lives on a git server. */
  remote: RemoteWorld | null;
  /** Where workers find the world by default: the URL, or the path. */
  location: string;
}

export async function openWorldLocation(location: string, cacheDir = defaultCacheDir()): Promise<OpenedWorld> {
  if (!isGitUrl(location)) return { world: await LocalWorld.open(location), remote: null, location };
  const remote = await openRemoteWorld(location, cacheDir);
  return { world: remote.repo, remote, location };
}

/**
 * The queue of a distributed run on a world behind a git URL: a job goes out only once the
 * scheduler's record of it is on the server (the worker reads it from there), and a result comes
 * in with the worker's record and candidate fetched from the server into the mirror.
 */
export function syncingWithServer(queue: EpisodeQueue, remote: RemoteWorld): EpisodeQueue {
  // Other refused refs (a worker pushed a newer record meanwhile) are left for the next push.
  const pushRecords = async (job: EpisodeJob) => {
    const ref = `refs/genesis/episodes/${job.episodeId}`;
    if ((await remote.flush()).includes(ref)) {
      throw new GenesisError('world-push-failed', `the server refused the ledger ref ${ref}`, { hint: 'check write access to refs/genesis/* on the server' });
    }
  };
  return {
    submit: async (job) => {
      await pushRecords(job);
      await queue.submit(job);
    },
    nextResult: async () => {
      const result = await queue.nextResult();
      await remote.fetchEpisode(result.episodeId);
      return result;
    },
    acknowledge: (id) => queue.acknowledge(id),
    ensureSubmitted: async (job) => {
      await pushRecords(job);
      return queue.ensureSubmitted(job);
    },
    cancel: (id) => queue.cancel(id),
    // What the workers hold is Redis's to say, wherever the world is.
    ...(queue.notTaken ? { notTaken: (ids: readonly string[]) => queue.notTaken!(ids) } : {}),
    ...(queue.holders ? { holders: (ids: readonly string[]) => queue.holders!(ids) } : {}),
    close: () => queue.close(),
  };
}

/**
 * The verification queue of a distributed run on a world behind a git URL. A speculative commit
 * exists only in the scheduler's mirror until it is pushed: a job goes out once its ref
 * (refs/genesis/speculative/<episode>, which carries the commits ahead of it too) is on the
 * server, and a result comes in with the verification record the worker pushed fetched into the
 * mirror, where the lander looks for the proof.
 */
export function syncingVerifications(queue: VerificationQueue, remote: RemoteWorld): VerificationQueue {
  return {
    submit: async (job) => {
      const ref = `${SPECULATIVE_REF_PREFIX}${job.episodeId}`;
      if ((await remote.flush()).includes(ref)) {
        throw new GenesisError('world-push-failed', `the server refused the speculative commit ref ${ref}`, {
          hint: 'check write access to refs/genesis/* on the server',
        });
      }
      await queue.submit(job);
    },
    nextResult: async () => {
      const result = await queue.nextResult();
      await remote.fetchRef(`${VERIFICATION_REF_PREFIX}${result.verificationId}`);
      return result;
    },
    cancel: (ids) => queue.cancel(ids),
    ensureSubmitted: () => queue.ensureSubmitted(),
    close: () => queue.close(),
  };
}

/** `publish:` of world.yaml, attached to the world; null when it names no remote. */
export async function startPublishing(world: WorldRepo, manifest: WorldManifest, say: (line: string) => void): Promise<Publisher | null> {
  if (!manifest.publish?.length) return null;
  const adopted = (await world.adoption()) !== null;
  const publisher = new Publisher(world, manifest.branch, manifest.publish, { adopted, onEvent: (event) => say(describePublish(event)) });
  world.onRefMoved(publisher);
  await publisher.resume();
  return publisher;
}

export function describePublish(event: PublishEvent): string {
  if (event.type === 'published') return `publish: ${event.url} now at ${event.head.slice(0, 12)}${event.attempt > 1 ? ` (after ${event.attempt} tries)` : ''}`;
  const next = event.retryInMs === null ? 'tried again by the next run' : `again in ${Math.round(event.retryInMs / 1000)}s`;
  return `publish: push to ${event.url} failed (try ${event.attempt}), ${next}: ${event.error}`;
}

/** Pushes what is still local at the end of a run; says what is left behind. */
export async function finishPushing(opened: OpenedWorld, publisher: Publisher | null, say: (line: string) => void): Promise<void> {
  const refused = (await opened.remote?.flush().catch((error: unknown) => [String(error)])) ?? [];
  if (refused.length)
    say(`world: ${refused.length} ledger ref(s) not pushed to ${redactUrl(opened.location)} (${refused.slice(0, 3).join(', ')}); the next run pushes them`);
  publisher?.close();
  const behind = (await publisher?.flush()) ?? [];
  if (behind.length) say(`publish: still behind: ${behind.map(redactUrl).join(', ')}; the next genesis run on this world pushes again`);
}
