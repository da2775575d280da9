import { createRng } from './prng.js';

/**
 * Fixed costs of one change outside its agent and gate, as `npm run bench -- --only scaling`
 * measured them (its P=4 runs in process and over BullMQ, means; bench/RESULTS.md has the run and
 * its machine, and a quieter machine pays less): the scheduler's start of an
 * episode (its record written), one at a time; an episode's workspace, collect, ledger writes and
 * the wait for the scheduler to take its result (over BullMQ also the job's pickup, the worker's
 * setup, the round trip for its place and the result's delivery: 0.52 s there, 0.62 s in process);
 * the integrator's time to build a change on its tip (a merge in the object store) and to land one
 * (compare-and-swap and ledger), one at a time; and how much longer a failing gate runs than a
 * passing one (the test, its re-run to tell a flaky test, and the same test on the base: 2.85 in
 * process, 2.93 over BullMQ).
 */
export const MEASURED_COSTS = { startS: 0.04, episodeOverheadS: 0.6, buildS: 0.03, landS: 0.1, failedGateFactor: 2.9 } as const;

/** What `genesis model pipeline` simulates: a world of independent tasks and the pipeline of genesis run. */
export interface PipelineModelInput {
  /** Episodes at once (parallelism, or workers). */
  workers: number;
  /** Minutes an agent works. */
  agentMin: number;
  /** Minutes a gate takes (an episode's own gate, and a verification on a speculative tip). */
  gateMin: number;
  /** Probability that a change fails its own gate (a new episode retries the task). @default 0 */
  reject?: number;
  /** Probability that a change conflicts with those ahead when it joins the queue (rejected without a gate, retried). @default 0 */
  conflict?: number;
  /**
   * Probability that a change which passed its own gate fails on its speculative tip (it breaks
   * with a change ahead of it): it is rejected and retried, and those behind it are rebuilt and
   * verified again. @default 0
   */
  verifyReject?: number;
  /** Verifications at once. @default workers */
  slots?: number;
  /** Tasks to land. @default 20 × workers */
  tasks?: number;
  /** Spread of agent and gate times, as a fraction (uniform ±). @default 0.1 */
  jitter?: number;
  seed?: number;
  /** Whether an episode reserves its place and gates its change on the speculative tip (in process) rather than on its base (BullMQ workers). @default true */
  gateOnTip?: boolean;
  /** Minutes the scheduler takes to start an episode; starts, builds and landings go one at a time. @default MEASURED_COSTS.startS / 60 */
  startMin?: number;
  /** Minutes of each episode outside its start, agent and gate. @default MEASURED_COSTS.episodeOverheadS / 60 */
  episodeOverheadMin?: number;
  /** Minutes the integrator takes to build a change on its tip; builds and landings go one at a time. @default MEASURED_COSTS.buildS / 60 */
  buildMin?: number;
  /** Minutes the integrator takes to land one change. @default MEASURED_COSTS.landS / 60 */
  landMin?: number;
  /** Minutes a verification on a speculative tip takes. @default gateMin */
  verifyMin?: number;
  /** A failing own gate's duration, as a multiple of a passing one's. @default MEASURED_COSTS.failedGateFactor */
  failedGateFactor?: number;
}

export interface PipelineModelResult {
  makespanMin: number;
  acceptedPerHour: number;
  /** What W episodes could land with no integration cost at all: ceil(tasks / W) × (agent + gate). */
  ceilingMin: number;
  efficiency: number;
  /** Own gates (failed ones too) and verifications on speculative tips, per accepted change. */
  gatesPerAccepted: number;
  /** Verifications on speculative tips (second gates). */
  verifications: number;
  /** Minutes from an accepted change's episode start to its landing. */
  meanTimeToLandMin: number;
  accepted: number;
  rejected: number;
}

interface Entry {
  start: number;
  /** Reserved by its episode before its own gate (in process): it may not land until that gate passed. */
  pending: boolean;
  /** With `pending`: starts the episode's own gate once the reserved commit is built. */
  gate?: (() => void) | undefined;
  /** Taken out by a conflict found at its reserved build: its episode is rejected once its gate is done. */
  conflicted?: boolean;
  /**
   * Reserved, and will not land: its own gate fails (`reject`), or it breaks with a change ahead
   * (`verifyReject`). Every change whose tip holds it fails its gate there too until it is out.
   */
  doomed?: 'fails' | 'clashes';
  /** Its reserved commit was built on a tip holding a doomed change: its gate on it fails, and it is gated on its base. */
  onBrokenTip?: boolean;
  /** The version its own gate judged it on. */
  gatedOn: number;
  /** The head its episode started from (reserved changes). */
  base?: number;
  /** The version it is built on, and its own speculative version on top. */
  onto: number;
  tip: number;
  stage: 'building' | 'built' | 'gating' | 'verifying' | 'verified' | 'landing';
  generation: number;
}

interface Settings {
  W: number;
  S: number;
  N: number;
  agent: () => number;
  gate: () => number;
  verify: () => number;
  overhead: number;
  start: number;
  build: number;
  land: number;
  failedGateFactor: number;
  reject: number;
  conflict: number;
  verifyReject: number;
  gateOnTip: boolean;
}

/**
 * A seeded discrete-event simulation of what `genesis run` does with independent tasks: W episode
 * slots (the scheduler's start, the agent, the change's own gate, then the episode's overhead until
 * the scheduler has its result and refills the slot); in process, an episode takes its place in
 * the integration queue when its agent ends and gates the commit built there, on every change
 * ahead; over BullMQ (`gateOnTip: false`) it gates on its base and joins with its result. Each
 * change is built on the one ahead; it lands with no further gate when its own gate judged that
 * very commit, and is otherwise verified on its tip in S verification slots (a pool where a
 * superseded verification runs to its end). Starts, builds and landings go one at a time, as the
 * scheduler handles its events. A conflict found at the build, a failure on a tip or a failing
 * reserved change takes that change out and rebuilds those behind it. Pure: the same input gives
 * the same result.
 */
export function simulatePipeline(input: PipelineModelInput): PipelineModelResult {
  const rng = createRng(input.seed ?? 1);
  const jitter = input.jitter ?? 0.1;
  const draw = (mean: number) => () => mean * (1 + jitter * (2 * rng.next() - 1));
  const s: Settings = {
    W: input.workers,
    S: input.slots ?? input.workers,
    N: input.tasks ?? 20 * input.workers,
    agent: draw(input.agentMin),
    gate: draw(input.gateMin),
    verify: draw(input.verifyMin ?? input.gateMin),
    overhead: input.episodeOverheadMin ?? MEASURED_COSTS.episodeOverheadS / 60,
    start: input.startMin ?? MEASURED_COSTS.startS / 60,
    build: input.buildMin ?? MEASURED_COSTS.buildS / 60,
    land: input.landMin ?? MEASURED_COSTS.landS / 60,
    failedGateFactor: input.failedGateFactor ?? MEASURED_COSTS.failedGateFactor,
    reject: input.reject ?? 0,
    conflict: input.conflict ?? 0,
    verifyReject: input.verifyReject ?? 0,
    gateOnTip: input.gateOnTip ?? true,
  };
  const sim = new Simulation(s, () => rng.next());
  const result = sim.run();
  const ceilingMin = Math.ceil(s.N / s.W) * (input.agentMin + input.gateMin);
  return { ...result, ceilingMin, efficiency: ceilingMin / result.makespanMin };
}

class Simulation {
  private now = 0;
  private seq = 0;
  private readonly events: Array<{ at: number; seq: number; run: () => void }> = [];
  private head = 0;
  private version = 0;
  private backlog: number;
  private running = 0;
  private gates = 0;
  private verifications = 0;
  private accepted = 0;
  private rejected = 0;
  private landedTotal = 0;
  private readonly queue: Entry[] = [];
  /** The verification pool: jobs waiting, and how many run. */
  private readonly poolWaiting: Array<{ entry: Entry; generation: number }> = [];
  private poolBusy = 0;
  private readonly chain: Array<{ cost: number; done: () => void }> = [];
  private chainBusy = false;

  constructor(
    private readonly s: Settings,
    private readonly random: () => number,
  ) {
    this.backlog = s.N;
  }

  run(): Omit<PipelineModelResult, 'ceilingMin' | 'efficiency'> {
    this.startEpisodes();
    while (this.events.length > 0 && this.accepted < this.s.N) {
      const next = this.events.shift()!;
      this.now = next.at;
      next.run();
    }
    return {
      makespanMin: this.now,
      acceptedPerHour: (this.accepted / this.now) * 60,
      gatesPerAccepted: this.gates / Math.max(1, this.accepted),
      verifications: this.verifications,
      meanTimeToLandMin: this.landedTotal / Math.max(1, this.accepted),
      accepted: this.accepted,
      rejected: this.rejected,
    };
  }

  private at(delay: number, run: () => void): void {
    const event = { at: this.now + delay, seq: this.seq++, run };
    let i = this.events.length;
    while (i > 0 && this.events[i - 1]!.at > event.at) i--;
    this.events.splice(i, 0, event);
  }

  /** The version a change joining now is built on: the last speculative commit, or the head. */
  private tail(): number {
    return this.queue.at(-1)?.tip ?? this.head;
  }

  /** The scheduler handles one thing at a time: episode starts, builds and landings wait their turn. */
  private serial(cost: number, done: () => void): void {
    this.chain.push({ cost, done });
    this.runChain();
  }

  private runChain(): void {
    if (this.chainBusy) return;
    const next = this.chain.shift();
    if (!next) return;
    this.chainBusy = true;
    this.at(next.cost, () => {
      this.chainBusy = false;
      next.done();
      this.runChain();
    });
  }

  private startEpisodes(): void {
    while (this.running < this.s.W && this.backlog > 0) {
      this.backlog--;
      this.running++;
      const start = this.now;
      this.serial(this.s.start, () => {
        const base = this.head;
        this.at(this.s.agent(), () => (this.s.gateOnTip ? this.reserve(start, base) : this.gateOnBase(start, base)));
      });
    }
  }

  /** Over BullMQ: the worker gates the change on its base, and the change joins the queue with its result. */
  private gateOnBase(start: number, base: number): void {
    const fails = this.random() < this.s.reject;
    this.gates++;
    this.at(this.s.gate() * (fails ? this.s.failedGateFactor : 1) + this.s.overhead, () => {
      this.running--;
      // As the run loop does: the freed slot is refilled before the change joins the queue.
      if (fails) this.retry();
      this.startEpisodes();
      if (!fails) this.join(start, base);
    });
  }

  /**
   * In process: the episode takes its place in the queue when its agent ends and gates the commit
   * built there, on every change ahead (gated or still gating). If nothing ahead changed by the time
   * its gate passed, that commit lands with no second gate; if the queue was rebuilt under it, the
   * new build is verified. A failing gate takes the change out, and those behind it are rebuilt.
   */
  private reserve(start: number, base: number): void {
    const entry: Entry = { start, base, pending: true, gatedOn: -1, onto: this.tail(), tip: ++this.version, stage: 'building', generation: 1 };
    const fails = this.random() < this.s.reject;
    if (fails) entry.doomed = 'fails';
    else if (this.queue.length > 0 && this.random() < this.s.verifyReject) entry.doomed = 'clashes';
    entry.gate = () => {
      const generation = entry.generation;
      this.gates++;
      this.at(this.reservedGateTime(entry), () => {
        this.running--;
        if (fails || entry.conflicted) this.retry();
        this.startEpisodes();
        const at = this.queue.indexOf(entry);
        if (at < 0) return;
        if (fails) {
          this.queue.splice(at, 1);
          this.rebuildFrom(at);
        } else {
          entry.pending = false;
          // Judged on its base (its tip was broken, or it breaks with one ahead): it is verified on its tip.
          if (entry.onBrokenTip || entry.doomed) {
            if (entry.stage === 'gating') entry.stage = 'built';
          } else if (entry.stage === 'gating' && entry.generation === generation) entry.stage = 'verified';
        }
        this.pump();
      });
    };
    this.queue.push(entry);
    this.buildLater(entry);
  }

  /**
   * How long a reserved change's own gate takes, as run-episode.ts runs it: on its tip; when it
   * fails there while the tip holds a change it did not start from (one ahead fails, or it breaks
   * with one ahead), the failing gate (test, its re-run, the run on the tip's base) and then the
   * gate on its own base, which fails again for a change that is bad itself.
   */
  private reservedGateTime(entry: Entry): number {
    const failed = this.s.gate() * this.s.failedGateFactor;
    if (!entry.onBrokenTip && !entry.doomed) return this.s.gate() + this.s.overhead;
    if (entry.doomed === 'fails') return failed + (entry.onto === entry.base ? 0 : failed) + this.s.overhead;
    return failed + this.s.gate() + this.s.overhead;
  }

  private retry(): void {
    this.rejected++;
    this.backlog++;
  }

  private join(start: number, gatedOn: number): void {
    const entry: Entry = { start, pending: false, gatedOn, onto: this.tail(), tip: ++this.version, stage: 'building', generation: 1 };
    this.queue.push(entry);
    this.buildLater(entry);
  }

  /** A build on the stage's turn: a conflict rejects the change (those behind are rebuilt); else it is verified, or ready to land when its own gate judged this very tip. */
  private buildLater(entry: Entry): void {
    const generation = entry.generation;
    this.serial(this.s.build, () => {
      const at = this.queue.indexOf(entry);
      if (at < 0 || entry.generation !== generation) return;
      const gate = entry.gate;
      entry.gate = undefined;
      if (at > 0 && this.random() < this.s.conflict) {
        this.queue.splice(at, 1);
        this.rebuildFrom(at);
        // A reserved change's episode still runs its gate (elsewhere); it is rejected when that ends.
        if (gate) entry.conflicted = true;
        else {
          this.retry();
          this.startEpisodes();
        }
      } else if (gate) {
        entry.stage = entry.generation === 1 ? 'gating' : 'built';
        entry.onBrokenTip = this.queue.slice(0, at).some((e) => e.doomed !== undefined);
      } else entry.stage = entry.onto === entry.gatedOn ? 'verified' : 'built';
      gate?.();
      this.pump();
    });
  }

  /** Verifications for built changes, front first, while fewer than S are being verified; then the front lands if it can. */
  private pump(): void {
    let verifying = this.queue.filter((e) => e.stage === 'verifying').length;
    for (const e of this.queue) {
      if (verifying >= this.s.S) break;
      if (e.stage !== 'built') continue;
      e.stage = 'verifying';
      verifying++;
      this.poolWaiting.push({ entry: e, generation: e.generation });
    }
    this.runPool();
    const front = this.queue[0];
    if (front?.stage === 'verified' && !front.pending) {
      front.stage = 'landing';
      this.serial(this.s.land, () => this.landed(front));
    }
  }

  private runPool(): void {
    while (this.poolBusy < this.s.S && this.poolWaiting.length > 0) {
      const job = this.poolWaiting.shift()!;
      this.poolBusy++;
      this.gates++;
      this.verifications++;
      this.at(this.s.verify(), () => {
        this.poolBusy--;
        this.verified(job.entry, job.generation);
        this.runPool();
      });
    }
  }

  private verified(entry: Entry, generation: number): void {
    const at = this.queue.indexOf(entry);
    if (at < 0 || entry.generation !== generation || entry.stage !== 'verifying') {
      this.pump();
      return;
    }
    if (entry.doomed === 'clashes' || (!this.s.gateOnTip && this.random() < this.s.verifyReject)) {
      this.queue.splice(at, 1);
      this.retry();
      this.rebuildFrom(at);
      this.startEpisodes();
    } else entry.stage = 'verified';
    this.pump();
  }

  /** Those behind a removed change were built on it: each is built again on the one ahead, a new generation to verify. */
  private rebuildFrom(from: number): void {
    for (let i = from; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      e.generation++;
      e.onto = i === 0 ? this.head : this.queue[i - 1]!.tip;
      e.tip = ++this.version;
      e.stage = 'building';
      this.buildLater(e);
    }
    // Jobs not started yet for the old generations are dropped; running ones finish, unheeded.
    for (let i = this.poolWaiting.length - 1; i >= 0; i--) {
      const job = this.poolWaiting[i]!;
      if (job.entry.generation !== job.generation) this.poolWaiting.splice(i, 1);
    }
  }

  private landed(front: Entry): void {
    this.queue.shift();
    this.head = front.tip;
    this.accepted++;
    this.landedTotal += this.now - front.start;
    this.pump();
  }
}
