import { createAgent } from '../agents/create-agent.js';
import { MemoryVerificationQueue } from '../queue/memory/verification-queue.js';
import { MemoryEpisodeQueue } from '../queue/memory/memory-queue.js';
import { createSandbox } from '../sandbox/create-sandbox.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { LeaseStore } from '../queue/lease-store.js';
import { MemoryLeaseStore } from '../queue/memory/memory-lease-store.js';
import type { RunSummary } from '../schedule/run/ports/events.js';
import type { AgentFactory, EpisodeTracer, RunPorts } from '../schedule/run/ports/ports.js';
import { runWorld, type RunOptions } from '../schedule/run/run-world.js';
import type { WorldRepo } from '../world/world-repo.js';

/** What an embedded run may take from its caller instead of the defaults. */
export interface EmbeddedRunOptions {
  /** The gate's sandbox. @default the one world.yaml names (`verify.sandbox`, with `verify.image`) */
  sandbox?: Sandbox;
  /** Where the run keeps its path leases (tests watch them). @default a new MemoryLeaseStore */
  leases?: LeaseStore;
  /** Where finished episodes go as traces. @default none */
  tracer?: EpisodeTracer;
}

/**
 * The composition root of a run in this process (`genesis run` without `--redis`, the sim
 * calibration, benchmarks and tests): the agent world.yaml names, the embedded episode and
 * verification queues (in-process workers, not test doubles) and in-memory path leases.
 */
export async function composeEmbeddedRun(world: WorldRepo, options: EmbeddedRunOptions = {}): Promise<RunPorts> {
  return {
    sandbox: options.sandbox ?? (await manifestSandbox(world)),
    agent: manifestAgent(world),
    leases: options.leases ?? new MemoryLeaseStore(),
    episodes: (run, parallelism) => new MemoryEpisodeQueue(run, parallelism),
    verifications: (run, slots) => new MemoryVerificationQueue(run, slots),
    tracer: options.tracer,
  };
}

/** Runs a world in this process with {@link composeEmbeddedRun}'s adapters. */
export async function runEmbedded(options: Omit<RunOptions, 'ports'> & EmbeddedRunOptions): Promise<RunSummary> {
  const { sandbox, leases, tracer, ...run } = options;
  return runWorld({ ...run, ports: await composeEmbeddedRun(run.world, { sandbox, leases, ...(tracer ? { tracer } : {}) }) });
}

/** The agent world.yaml asks for, made when the run starts. */
export function manifestAgent(world: WorldRepo): AgentFactory {
  return (manifest, head) => createAgent(manifest, world, head);
}

/** The sandbox world.yaml asks for at the accepted head, checked to be usable. */
export async function manifestSandbox(world: WorldRepo): Promise<Sandbox> {
  const manifest = await world.manifestAt('HEAD');
  return createSandbox(manifest.verify.sandbox, { image: manifest.verify.image });
}
