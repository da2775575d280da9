import { createRng } from '../reliability/prng.js';

/** What `genesis model pipeline` simulates: a world of independent tasks and the pipeline of genesis run. */
export interface PipelineModelInput {
  /** Episodes at once (parallelism, or workers). */
  workers: number;
  /** Minutes an agent works. */
  agentMin: number;
  /** Minutes a gate takes. */
  gateMin: number;
  /** Probability that a change fails its gate (it is retried by a new episode). @default 0 */
  reject?: number;
  /** Probability that a change conflicts with those ahead when it joins the queue. @default 0 */
  conflict?: number;
  /** Verifications at once. @default workers */
  slots?: number;
  /** Tasks to land. @default 20 × workers */
  tasks?: number;
  /** Spread of agent and gate times, as a fraction (uniform ±). @default 0.1 */
  jitter?: number;
  seed?: number;
  /** Whether an episode gates its change on the speculative tip (in process). @default true */
  gateOnTip?: boolean;
}

export interface PipelineModelResult {
  makespanMin: number;
  acceptedPerHour: number;
  /** What W episodes could land with no integration cost at all: ceil(tasks / W) × (agent + gate). */
  ceilingMin: number;
  efficiency: number;
  gatesPerAccepted: number;
  /** Minutes from an accepted change's episode start to its landing. */
  meanTimeToLandMin: number;
  accepted: number;
  rejected: number;
}

interface Change {
  start: number;
  /** The queue's tail (a version number) the episode gated on, or -1 for its base. */
  gatedOn: number;
  base: number;
  stage: 'built' | 'verifying' | 'verified';
  generation: number;
}

/**
 * A seeded discrete-event simulation of the pipeline: W episode slots (agent, then its own gate),
 * an ordered integration queue whose changes are verified on the tip ahead of them in S slots and
 * land in order as verified, a rejection that rebuilds those behind, conflicts found at join.
 * Pure: the same input gives the same result.
 */
export function simulatePipeline(input: PipelineModelInput): PipelineModelResult {
  const rng = createRng(input.seed ?? 1);
  const W = input.workers;
  const S = input.slots ?? W;
  const N = input.tasks ?? 20 * W;
  const jitter = input.jitter ?? 0.1;
  const draw = (mean: number) => mean * (1 + jitter * (2 * rng.next() - 1));
  const events: Array<{ at: number; run: () => void }> = [];
  const at = (time: number, run: () => void) => {
    events.push({ at: time, run });
    events.sort((a, b) => a.at - b.at);
  };
  let now = 0;
  let head = 0; // version of the accepted head
  let version = 0; // versions of speculative commits
  let backlog = N;
  let running = 0;
  let verifying = 0;
  let gates = 0;
  let accepted = 0;
  let rejected = 0;
  let landedTotal = 0;
  const queue: Array<Change & { tip: number }> = [];
  const tail = () => (queue.length ? queue[queue.length - 1]!.tip : head);

  const startEpisodes = () => {
    while (running < W && backlog > 0) {
      backlog--;
      running++;
      const start = now;
      const base = head;
      at(now + draw(input.agentMin), () => {
        const gatedOn = input.gateOnTip === false ? base : tail();
        gates++;
        at(now + draw(input.gateMin), () => {
          running--;
          if (rng.next() < (input.reject ?? 0)) {
            rejected++;
            backlog++;
          } else join({ start, gatedOn, base, stage: 'built', generation: 0 });
          startEpisodes();
        });
      });
    }
  };

  const join = (c: Change) => {
    if (queue.length > 0 && rng.next() < (input.conflict ?? 0)) {
      rejected++;
      backlog++;
      return;
    }
    const onto = tail();
    // Built on exactly the commit its gate judged it on: that gate counts, nothing more to verify.
    const verified = onto === c.gatedOn;
    queue.push({ ...c, stage: verified ? 'verified' : 'built', tip: ++version });
    pump();
  };

  const pump = () => {
    for (const c of queue) {
      if (verifying >= S) break;
      if (c.stage !== 'built') continue;
      c.stage = 'verifying';
      verifying++;
      gates++;
      const generation = c.generation;
      at(now + draw(input.gateMin), () => {
        verifying--;
        if (c.generation === generation && c.stage === 'verifying') c.stage = 'verified';
        pump();
      });
    }
    while (queue[0]?.stage === 'verified') {
      const c = queue.shift()!;
      head = c.tip;
      accepted++;
      landedTotal += now - c.start;
    }
  };

  startEpisodes();
  while (events.length > 0 && accepted < N) {
    const next = events.shift()!;
    now = next.at;
    next.run();
  }
  const ceilingMin = Math.ceil(N / W) * (input.agentMin + input.gateMin);
  return {
    makespanMin: now, acceptedPerHour: (accepted / now) * 60, ceilingMin, efficiency: ceilingMin / now,
    gatesPerAccepted: gates / Math.max(1, accepted), meanTimeToLandMin: landedTotal / Math.max(1, accepted), accepted, rejected,
  };
}


