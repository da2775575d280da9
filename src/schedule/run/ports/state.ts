import type { Agent } from '../../../agents/agent.js';
import type { EpisodeJob, EpisodeResult } from '../../../episode/episode-job.js';
import type { IntegrationOutcome, IntegrationStage } from '../../../integrate/integration-stage.js';
import type { Lander } from '../../../integrate/lander.js';
import type { VerificationResult } from '../../../queue/verification-job.js';
import type { VerificationQueue } from '../../../queue/verification-queue.js';
import type { EpisodeQueue } from '../../../queue/episode-queue.js';
import type { Sandbox } from '../../../sandbox/sandbox.js';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import type { Ledger } from '../../../ledger/ledger.js';
import type { EpisodeSummary } from '../../../ledger/summary.js';
import type { WorldManifest } from '../../../manifest/schema.js';
import type { WorldRepo } from '../../../world/world-repo.js';
import type { LeaseStore } from '../../../queue/lease-store.js';
import type { PolicyEvent, PolicyState } from '../../run-policy.js';
import type { LiveWaits } from '../../live-waits.js';
import type { RunEvent, RunSummary } from './events.js';
import type { Inbox } from './inbox.js';
import type { WorkerWaitFeed } from '../../../queue/worker-wait-feed.js';
import type { TipService } from '../../../episode/gate-on-tip.js';
import type { EpisodeTracer, RunPorts } from './ports.js';
import type { SteeringOutcome } from '../../../operations/carry-out-steering.js';

/**
 * A run whose episodes run on workers elsewhere: its ports' queues and leases are shared (BullMQ,
 * Redis). The run then keeps them in step (lease renewals, lost jobs put back), leaves running
 * episodes to their workers when it stops, and answers the workers' tip requests.
 */
export interface DistributedRun {
  /** How often to check that the queue still holds every running episode. @default 5000 */
  reconcileMs?: number;
  /** Answers workers asking for their change's place in the integration queue; without it they gate on their base. */
  tips?: TipService;
  /** The waits of this world's jobs on the workers, told here as those of jobs in process are. */
  waits?: WorkerWaitFeed;
}

export interface RunOptions {
  world: WorldRepo;
  /** The adapters of this run, built by the command's composition root (src/compose/embedded-run.ts for one process). */
  ports: RunPorts;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** Workers elsewhere, through the ports' shared queues; without it episodes run in this process. */
  distributed?: DistributedRun;
  /** Run the pending tasks even when the goal's evidence passes. */
  pastEvidence?: boolean;
  /** Start at most this many episodes in this run, then end as when goal.stop.maxEpisodes is spent (benchmarks). */
  maxEpisodes?: number;
}

/** What a starting run takes over from the one before it. */
export interface Recovered {
  /** Changes that passed their own gate and wait for integration: they join the queue again. */
  integrating: EpisodeRecord[];
  /** Episodes workers may still be running (distributed only): their results are owed. */
  running: EpisodeRecord[];
  /** Changes that passed their gate and wait for a person's review: they keep waiting. */
  reviewing: EpisodeRecord[];
  /** Records closed now: landed ones recorded as accepted, the rest abandoned. */
  closed: number;
}

/**
 * Feeds one event to the policy and carries out what it decides (decide/apply.ts). The steps that
 * carry out a command and must tell the policy what came of it are handed this, never import it:
 * the run's helpers import one way (loop → wakes → decide → carry out → ports).
 */
export type Decide = (event: PolicyEvent) => Promise<void>;

/** What wakes the run loop: a result of either stage, an outcome of integration, an interrupt, or the clock. */
export type Wake =
  | { kind: 'episode'; result: EpisodeResult }
  | { kind: 'verification'; result: VerificationResult }
  | { kind: 'integrated'; outcome: IntegrationOutcome }
  | { kind: 'aborted' }
  /** A person's request waits in the world; `steered`: one was carried out. */
  | { kind: 'steer' }
  | { kind: 'steered'; id: string; outcome: SteeringOutcome }
  | { kind: 'tick' };

/**
 * Everything one run holds, in one place: the ports and stages it works through (made by openRun),
 * what it knows of the ledger, and the policy's state. The steps of the run (open, recover, the
 * loop, the commands, close) read and change this object; no step keeps state of its own.
 */
export interface Run {
  readonly world: WorldRepo;
  readonly emit: (event: RunEvent) => void;
  /** Where each finished episode goes as a trace, if anywhere. */
  readonly tracer: EpisodeTracer | undefined;
  /** When the run started (ms), for its duration. */
  readonly startedAt: number;
  /** Workers elsewhere, through the ports' shared queues; undefined: episodes run in this process. */
  readonly distributed: DistributedRun | undefined;
  /** The manifest at the accepted head: read again when a change lands. */
  manifest: WorldManifest;
  readonly startHead: string;
  readonly sandbox: Sandbox;
  readonly leases: LeaseStore;
  readonly agent: Agent;
  readonly ledger: Ledger;
  /** This process (host:pid), for the ledger. */
  readonly worker: string;
  /** Episodes the ledger's journal held when the run started: run in a process of this machine that died. */
  readonly journaled: ReadonlySet<string>;
  /** A summary of every episode of the world. */
  readonly summaries: Map<string, EpisodeSummary>;
  /** Records this run knows in full: the open ones it found (recovery needs their candidates and gates), then every one it starts or closes. */
  readonly records: Map<string, EpisodeRecord>;
  readonly queue: EpisodeQueue;
  readonly verifications: VerificationQueue;
  readonly lander: Lander;
  readonly stage: IntegrationStage;
  /** Results of both stages arrive through one inbox, handled one at a time. */
  readonly inbox: Inbox<Wake>;
  /** The last write of the integration queue's snapshot file: one at a time, in order. */
  snapshots: Promise<void>;
  /** The waits going on now, kept for genesis status --world and the dashboard. */
  readonly waits: LiveWaits;
  /** Stops listening for the workers' waits (distributed); nothing to stop in process. */
  readonly unwatchWorkerWaits: () => Promise<void>;
  /** What the run took over from the one before it (recoverRun). */
  recovered: Recovered;
  /** The jobs of the episodes running, as submitted: a job a shared queue lost is submitted again. */
  readonly jobs: Map<string, EpisodeJob>;
  /**
   * The racers of a race share one path lease, held in the name of the race (its first racer): by
   * race id, the racers that still need it. It is let go when the last of them has ended.
   */
  readonly raceLeases: Map<string, Set<string>>;
  policy: PolicyState;
  evidence: RunSummary['evidence'];
  /** When the shared queue and leases were last checked (distributed only). */
  reconciledAt: number;
  /** The episode queue was told to stop (in process, closing it aborts the agents). */
  episodesStopped: boolean;
  /** People's requests being carried out, by id (see steering.ts): the loop does not end while one is. */
  readonly steering: Map<string, Promise<void>>;
  /** The loop has ended: nothing more is taken from the world. */
  loopEnded: boolean;
}
