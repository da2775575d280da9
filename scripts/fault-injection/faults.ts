import type { Rng } from '../../src/reliability/prng.js';

/**
 * The faults a trial can inject. `kill-integrator` is a kill -9 of the scheduler timed to land
 * while it integrates a result (the scheduler is the world's integrator); `kill-scheduler` lands
 * at any moment. `restart-docker` restarts a private Docker daemon during a gate. The integration
 * stage: `kill-verifier` kills a worker while it verifies a speculative commit (its verification
 * must be retried elsewhere); `kill-lander` kills the scheduler just after a verification passed,
 * while it lands (nothing may land unverified or unrecorded).
 */
export type FaultKind = 'kill-worker' | 'kill-scheduler' | 'kill-integrator' | 'restart-redis' | 'restart-docker' | 'kill-verifier' | 'kill-lander';

export const FAULT_KINDS: readonly FaultKind[] = [
  'kill-worker',
  'kill-scheduler',
  'kill-integrator',
  'restart-redis',
  'restart-docker',
  'kill-verifier',
  'kill-lander',
];

/** A trial's plan, drawn from the seeded stream before it starts, so a seed replays the same trials. */
export interface FaultPlan {
  kind: FaultKind;
  /** After the first episode starts, how long to wait before injecting (for kill-integrator: before waiting for a result). */
  delayMs: number;
  /** Which of the workers, for kill-worker. */
  worker: number;
  /** How long each scripted agent works, so faults meet episodes in different phases. */
  sleepMs: number;
}

/** Cycles through the kinds (so every kind gets its share of a small run) with random timing. */
export function planFault(rng: Rng, trial: number, kinds: readonly FaultKind[]): FaultPlan {
  return {
    kind: kinds[trial % kinds.length]!,
    delayMs: rng.nextInt(4000),
    worker: rng.nextInt(3),
    sleepMs: 500 + rng.nextInt(1500),
  };
}
