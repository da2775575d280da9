import type { Rng } from '../../src/reliability/prng.js';

/**
 * The faults a trial can inject. `kill-worker` is a kill -9 of a worker while it runs an episode;
 * `kill-scheduler` of the scheduler at any moment; `kill-integrator` of the scheduler just after a
 * worker sent a passing result (the scheduler is the world's integrator). `restart-redis` crashes
 * the private Redis and starts it again from its append-only file; `restart-docker` restarts a
 * private Docker daemon during a gate. The gating stage, as it is since tip gating by reservation
 * (a change is gated by its own episode on the place the scheduler reserved for it in the
 * integration queue): `kill-tip-gater` kills a worker while it gates a change on its reserved tip
 * (the reservation outstanding: its job must run again elsewhere and the queue must not wait on it
 * for ever); `kill-lander` kills the scheduler between such a change's passing result and its
 * landing report (before the landing transaction, or after it and before the record's lease and
 * acknowledgement: nothing may land unverified or unrecorded).
 */
export type FaultKind = 'kill-worker' | 'kill-scheduler' | 'kill-integrator' | 'restart-redis' | 'restart-docker' | 'kill-tip-gater' | 'kill-lander';

export const FAULT_KINDS: readonly FaultKind[] = [
  'kill-worker',
  'kill-scheduler',
  'kill-integrator',
  'restart-redis',
  'restart-docker',
  'kill-tip-gater',
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
