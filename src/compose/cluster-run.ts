import type { TipService } from '../episode/gate-on-tip.js';
import { MemoryVerificationQueue } from '../queue/memory/verification-queue.js';
import type { VerificationQueue } from '../queue/verification-queue.js';
import type { EpisodeQueue } from '../queue/episode-queue.js';
import type { WorkerWaitFeed } from '../queue/worker-wait-feed.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { LeaseStore } from '../queue/lease-store.js';
import type { RunOptions } from '../schedule/run/run-world.js';
import type { WorldRepo } from '../world/world-repo.js';
import { manifestAgent, manifestSandbox } from './embedded-run.js';

/** What a scheduler shares with its workers (joinCluster makes them: BullMQ queues, Redis leases, the tip server). */
export interface ClusterAdapters {
  queue: EpisodeQueue;
  leases: LeaseStore;
  /** Where speculative commits are verified; without it, in this process. */
  verifications?: VerificationQueue;
  /** How often to check that the queue still holds every running episode. @default 5000 */
  reconcileMs?: number;
  /** Answers workers asking for their change's place in the integration queue; without it they gate on their base. */
  tips?: TipService;
  /** The waits the workers tell of this world's jobs. */
  waits?: WorkerWaitFeed;
}

/**
 * The composition root of a scheduler whose episodes run on workers (`genesis run --redis`, the
 * scaling bench): the cluster's shared queues and leases, the agent world.yaml names (for the
 * records' labels) and the sandbox that runs the goal's evidence.
 */
export async function composeClusterRun(world: WorldRepo, cluster: ClusterAdapters, sandbox?: Sandbox): Promise<Pick<RunOptions, 'ports' | 'distributed'>> {
  const { queue, leases, verifications, reconcileMs, tips, waits } = cluster;
  return {
    ports: {
      sandbox: sandbox ?? (await manifestSandbox(world)),
      agent: manifestAgent(world),
      leases,
      episodes: () => queue,
      verifications: (run, slots) => verifications ?? new MemoryVerificationQueue(run, slots),
    },
    distributed: { reconcileMs, tips, waits },
  };
}
