import type { Agent } from '../../agents/agent.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { TaskSpec, WorldManifest } from '../../manifest/schema.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { WorldRepo } from '../../world/world-repo.js';
import type { EpisodeJob } from '../episode-job.js';
import type { PlaceAfterFailure, ReserveTip, WatchPlace } from '../gate-on-tip.js';

export interface EpisodeDeps {
  world: WorldRepo;
  ledger: Ledger;
  sandbox: Sandbox;
  agent: Agent;
  /** Who runs it (host:pid), for the ledger. */
  worker: string;
  /** Aborting it stops the agent; the episode then ends as abandoned. */
  signal?: AbortSignal;
  /** Takes the change's place in the integration queue and says which commit to gate; without it, or null: its base. */
  reserveTip?: ReserveTip;
  /** After a failure on a speculative tip: whose it is (see PlaceAfterFailure); without it, the change is gated again on its base. */
  placeAfterFailure?: PlaceAfterFailure;
  /** While the gate runs on a speculative tip: stops it when its place moves (see WatchPlace). */
  watchPlace?: WatchPlace;
  /** Called when a phase starts, for progress displays. */
  onPhase?: (job: EpisodeJob, phase: string) => void;
  /** Told what a long wait of the episode is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (job: EpisodeJob, what: string | null) => void;
  /**
   * The scheduler that reads this episode's result runs in this process: the record its gate left is
   * held in the ledger's journal (Ledger.hold) for the one git write that ends the episode. Without
   * it the record is written to git, where a scheduler in another process finds the proof of a
   * passing result (a result in Redis alone could be forged). @default false
   */
  hold?: boolean;
}

/**
 * One episode on its way through its steps (prepare, agent, collect, gate, record): what prepare
 * found, the time each phase took, and the work done aside once nothing reads the workspace.
 */
export interface Episode {
  readonly job: EpisodeJob;
  readonly deps: EpisodeDeps;
  /** The record the scheduler opened for it. */
  readonly record: EpisodeRecord;
  /** The manifest at the episode's base, and its task there. */
  readonly manifest: WorldManifest;
  readonly task: TaskSpec;
  /** The tasks done at the base: the candidate's tree is base + change. */
  readonly done: ReadonlySet<string>;
  readonly prompt: string;
  /** Passed to the steps that may wait long (the dependency set, a tip's baseline): they say what they wait on. */
  readonly waits: { onWait?: (what: string | null) => void };
  /** Milliseconds per phase, for the ledger. */
  readonly phases: Record<string, number>;
  /** The workspace's removal, once started (see setAside). */
  removing: Promise<boolean> | null;
  /** The change's diff for the ledger, made aside while the gate runs. */
  diffing: Promise<string>;
}

/** Runs one phase of the episode, reported as it starts and timed into `phases`. */
export async function timed<T>(episode: Episode, phase: string, work: () => Promise<T>): Promise<T> {
  episode.deps.onPhase?.(episode.job, phase);
  const t0 = performance.now();
  try {
    return await work();
  } finally {
    episode.phases[phase] = Math.round(performance.now() - t0);
  }
}
