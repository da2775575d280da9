import type { Agent } from '../../../agents/agent.js';
import type { EpisodeJob, EpisodeResult } from '../../../episode/episode-job.js';
import type { VerificationJob, VerificationResult } from '../../../queue/verification-job.js';
import type { VerificationQueue } from '../../../queue/verification-queue.js';
import type { EpisodeQueue } from '../../../queue/episode-queue.js';
import type { Sandbox } from '../../../sandbox/sandbox.js';
import type { WorldManifest } from '../../../manifest/schema.js';
import type { LeaseStore } from '../../../queue/lease-store.js';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';

/**
 * Where each finished episode goes as a trace (OpenTelemetry over OTLP in src/telemetry). Called
 * with the final record once the episode is closed; it must neither throw nor make the run wait.
 */
export interface EpisodeTracer {
  episodeEnded(record: EpisodeRecord): void;
}

/**
 * The agent of a run, made from the manifest at the commit the run starts from (a script agent
 * reads its recording there; `agent.rotation` makes one agent per entry, picked per attempt).
 */
export type AgentFactory = (manifest: WorldManifest, head: string) => Promise<Agent>;

/**
 * The episode queue of a run. `run` is what a worker in this process does with a job (agent and
 * own gate, with the run's ledger and integration stage): an in-process queue calls it, a queue
 * whose workers are elsewhere (BullMQ) ignores it. `parallelism` is the manifest's.
 */
export type EpisodeQueueFactory = (run: (job: EpisodeJob, signal: AbortSignal) => Promise<EpisodeResult>, parallelism: number) => EpisodeQueue;

/** The verification queue of a run, as {@link EpisodeQueueFactory}: `run` gates one speculative commit here, `slots` at a time. */
export type VerificationQueueFactory = (run: (job: VerificationJob) => Promise<VerificationResult>, slots: number) => VerificationQueue;

/**
 * The adapters a run works through. The run (runWorld) builds none of them: each command's
 * composition root (src/compose, src/cli) does, from the manifest and its flags.
 */
export interface RunPorts {
  /** Runs the goal's evidence and, in this process, gates and speculative verifications. */
  sandbox: Sandbox;
  agent: AgentFactory;
  /** Path leases: in memory for one process, in Redis for a cluster. */
  leases: LeaseStore;
  episodes: EpisodeQueueFactory;
  verifications: VerificationQueueFactory;
  /** Exports each finished episode as a trace; absent: no traces. */
  tracer?: EpisodeTracer | undefined;
}
