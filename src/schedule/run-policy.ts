import type { EpisodeResult } from '../episode/episode-job.js';
import { backoffDelay, backoffPolicy } from '../retry/backoff-policy.js';
import { reasonTraits, type EpisodeReason } from '../errors/rejection-reasons.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { EpisodeSummary } from '../ledger/summary.js';
import { forgedResultProblem } from './forged-result.js';
import { episodesOf, episodesOfTask, policyLedgerOf, withRecord, type PolicyLedger } from './policy-ledger.js';
import type { TaskSpec, WorldManifest } from '../manifest/schema.js';
import { budgetStop, idleStop, pickReadyTasks, type StopReason } from './scheduler.js';
import type { RetriedTaskStatus, RetryFacts } from './task-retry-status.js';
import { BROKEN_BASE_REASONS, deriveWorldTaskStatuses } from './world-task-status.js';

/**
 * The run policy: every decision of `genesis run` as a pure state machine,
 * `decide(state, event) → { state, commands }`. It holds the budgets, cooldowns, holds, the
 * circuit breaker, retries, stop reasons and which tasks are ready; the run loop only feeds it
 * events and carries out its commands against the ports (queue, leases, world, integration).
 * Nothing here reads a clock, git or Redis: time arrives in events.
 */
export interface PolicyState {
  readonly config: PolicyConfig;
  readonly tasks: readonly TaskSpec[];
  readonly done: ReadonlySet<string>;
  /** Every episode of the world, by task, and the totals budgets are held against, as the ledger has them (the loop keeps them current). */
  readonly ledger: PolicyLedger;
  /** Episodes whose agent or own gate is still working: they hold an episode slot. */
  readonly running: ReadonlyMap<string, string>;
  /** Episodes whose change passed its own gate and waits in the integration queue: no slot, but the task is busy. */
  readonly integrating: ReadonlyMap<string, string>;
  /** Changes that passed their own gate and wait for a person (`review`): no slot, the task is busy, nothing lands until approved. */
  readonly reviewing: ReadonlyMap<string, ReviewingChange>;
  /** Races under way (a task's `race: N`), by race id: the id of its first racer. Gone once none of its racers is busy. */
  readonly races: ReadonlyMap<string, RaceState>;
  /** Tasks whose gate found the accepted head itself failing: not tried again in this run. */
  readonly held: ReadonlyMap<string, string>;
  /** Tasks whose last episode met an outage of the machine (or whose lease another holder keeps), and the time (ms) before which none starts. */
  readonly cooldown: ReadonlyMap<string, number>;
  /** Episodes in a row of a task that met an outage: each next cooldown is longer (see outageBackoff). */
  readonly outages: ReadonlyMap<string, number>;
  /** The model provider's usage or rate limit holds the whole world: no episode starts before `untilMs`. */
  readonly hold: WorldHold | null;
  readonly retries: readonly RetryFacts[];
  readonly stop: StopReason | null;
  /** The run ended with this reason (the `finish` command was given): the loop stops, and no change takes a place in the integration queue any more. */
  readonly finished: StopReason | null;
  /** The episodes were told to stop (a hard budget, an interrupt): nothing more starts. */
  readonly closing: boolean;
  readonly now: number;
  readonly tally: Readonly<Tally>;
}

/** A change waiting for review: its task, and what joins the integration queue once it is approved. */
export interface ReviewingChange {
  task: string;
  change: IntegratingChange;
}

/**
 * A race: N episodes of one task started at once from the same base. The first to pass its gate
 * wins (in a ratchet world, once every racer has ended, the highest score, ties the smallest change);
 * the others end `outrun`, their work kept in the ledger.
 */
export interface RaceState {
  task: string;
  /** Every racer started, in order. */
  racers: readonly string[];
  /** The racer whose change goes on to integration (or review), once the race is decided. */
  winner: string | null;
  /** Ratchet worlds: racers that passed, held (in `running`) until every racer has ended. */
  passes: readonly RacePass[];
}

/** A racer whose change passed its own gate, as a ratchet race compares them. */
export interface RacePass {
  change: IntegratingChange;
  score: number;
  /** Files the change touched: the smaller change wins a tie. */
  size: number;
}

/** A change that passed its own gate, as it joins the integration queue. */
export interface IntegratingChange {
  id: string;
  task: string;
  candidate: string;
  base: string;
  source?: string;
  /** Handed to the queue by a gate that judged a place rebuilt under it: the queue's verification is its gate. */
  ungated?: boolean;
}

/** A hold of the whole world until a usage or rate limit resets. */
export interface WorldHold {
  untilMs: number;
  message: string;
}

export interface Tally {
  accepted: number;
  rejected: number;
  failed: number;
  abandoned: number;
  outrun: number;
  episodes: number;
}

export interface PolicyConfig {
  parallelism: number;
  maxAttempts: number;
  blockOnRepeat: boolean;
  budgets: WorldManifest['goal']['stop'];
  /** Episodes run on workers elsewhere: a hard budget leaves them to finish (their results are owed). */
  distributed: boolean;
  /** How long a task waits after an outage (Docker down, …) before its next episode; doubled for each outage in a row, up to a minute. @default 2000 */
  cooldownMs: number;
  /** When the goal's evidence passes, run on anyway (the tasks still pending are wanted). */
  pastEvidence: boolean;
  /** The world's gate is a ratchet (`verify.mode`): an episode's score goes into the trailer of what lands, known only after its own gate, so no change takes a place in the integration queue before it. */
  ratchet: boolean;
  /** Every change waits for review after its gate (`review: all`); otherwise those of tasks with `review: true`. */
  reviewAll: boolean;
  /** How often the loop looks for review decisions while changes wait for them (ms). @default 2000 */
  reviewPollMs: number;
  /** Episodes raced per task when the task names no `race` of its own (`agent.race`). @default 1 */
  race: number;
  /** Stop the other racers once a race is decided (`race.stopOnWin`). @default true */
  stopOnWin: boolean;
}

export type PolicyEvent =
  /** Time passed or the world changed: decide what starts, or why the run stops. */
  | { type: 'tick'; now: number; retries?: readonly RetryFacts[] }
  /** The loop took the task's lease and wrote the record: the episode runs. */
  | { type: 'started'; record: EpisodeRecord }
  /**
   * The loop tried every start it was given. `refused`: tasks whose path lease the store refused.
   * With nothing of this run running or integrating, none of its own episodes holds those paths:
   * another holder does (a duplicate run of a closed episode, a lease a Redis restart brought back),
   * and it lets go within its lease's ttl. Not the task's failure: it waits, uncharged, with backoff.
   */
  | { type: 'starts-done'; now: number; refused?: readonly string[] }
  /**
   * A worker's result. `record`: what the ledger holds for the episode when the result claims its
   * gate passed (the loop reads it; only the ledger the worker wrote is proof of a pass).
   */
  | { type: 'result'; result: EpisodeResult; record: EpisodeRecord | null }
  /** The episode's own gate passed: its change joined the integration queue. */
  | { type: 'passed'; id: string }
  /** An episode ended for good (failed, rejected, abandoned, or landed), with its final record. */
  | { type: 'finished'; record: EpisodeRecord; fatal?: { reason: string; message: string } | null; hold?: WorldHold | null; now: number }
  /** A change landed: the task is done and the manifest at the new head may list new tasks (and name another gate mode). */
  | { type: 'landed'; task: string; tasks: readonly TaskSpec[]; ratchet?: boolean }
  /** A person's change landed (an amendment, a new task, a reopening): the tasks and the done ones as the new head has them. */
  | { type: 'steered'; tasks: readonly TaskSpec[]; done: ReadonlySet<string>; ratchet?: boolean }
  | { type: 'evidence'; passed: boolean; command: string }
  /** A change left the integration queue without a verdict (the run stops); its record stays open for the next run. */
  | { type: 'withdrawn'; id: string }
  /** A person decided on a change waiting for review (the loop read the decision from the world). */
  | { type: 'reviewed'; id: string; decision: 'approve' | 'reject'; note: string | null }
  | { type: 'aborted' };

export type PolicyCommand =
  /**
   * Start episodes for these tasks, in order, until `limit` of them started (a lease may refuse one).
   * `earlier`: the task's earlier attempts the prompt reflects on, oldest first. `attempt` numbers
   * every attempt of the task (the ledger and its statistics group by it); `round` counts only
   * since the task's latest retry or reopening, as `retry.maxAttempts` is held against (the prompt's).
   * `racers`: episodes of the task to start at once, as one race (attempts `attempt`, `attempt + 1`, …,
   * so a rotation gives each racer another agent); a race that does not fit in what is left of
   * `limit` waits for slots (the next tasks may start meanwhile).
   */
  | { type: 'start'; tasks: Array<{ task: TaskSpec; attempt: number; round: number; earlier: string[]; racers: number }>; limit: number }
  /** A race is decided: stop its other racers still working (`race.stopOnWin`); each then ends `outrun`. */
  | { type: 'stop-racers'; ids: string[] }
  /** A racer of a decided race ended (passed or not): its record is closed `outrun`, its candidate kept. */
  | { type: 'outrun'; id: string; winner: string }
  /** Take every change out of the integration queue without a verdict (each is then `withdrawn`): their passing records stay open for the next run. */
  | { type: 'withdraw-changes' }
  /** Stop the running episodes (their work is quarantined) and the integration stage's verifications. */
  | { type: 'stop-episodes' }
  /** A result of an episode this run does not run (delivered twice, or already integrating): acknowledge it, and close its record again if a duplicate run reopened it. */
  | { type: 'drop-result'; id: string }
  /** A pass the ledger confirms: the change joins the integration queue (at the place it reserved, if any) and its result is acknowledged. */
  | { type: 'integrate'; change: IntegratingChange }
  /** A pass the ledger confirms, of a change that waits for a person: its record says awaiting-review, its result is acknowledged, nothing lands yet. */
  | { type: 'park'; change: IntegratingChange }
  /** A person rejected a change waiting for review: its record is closed as rejected (review-rejected), the note its message. */
  | { type: 'close-review'; id: string; note: string | null }
  /** A pass the ledger does not confirm (a forged result): the episode's record (`record`, as the ledger holds it) is closed with `closing`; nothing of it lands. */
  | { type: 'refuse-result'; id: string; record: EpisodeRecord | null; closing: Closing }
  /**
   * A result that did not pass: the episode's record is closed as it says. `fatal`: no other episode
   * can cure it (the circuit opens); `hold`: the provider's usage limit it met holds the world.
   */
  | { type: 'close-episode'; result: EpisodeResult; fatal: { reason: string; message: string } | null; hold: WorldHold | null }
  /** Run the goal's evidence command on the new head and report it. */
  | { type: 'check-evidence' }
  /** Nothing is running or integrating and the run has its stop reason: end. */
  | { type: 'finish'; reason: StopReason };

/** What closing a record sets on it, besides its status and end time. */
export type Closing = Pick<EpisodeRecord, 'outcome' | 'reason' | 'message' | 'signature'>;

/**
 * How a starting run closes an episode the run before it left open (it died: a crash, a kill).
 * Usually nobody's failure (`orchestrator-stopped`). One whose own gate was running when it died
 * is `gate-crashed`, still uncharged (once may be the machine); but when the task's episode
 * before it ended that way too, its gate is what kills the orchestrator (a report that runs it
 * out of memory, say) and would kill every next run: `poison-pill`, charged, and the task is
 * blocked (world-task-status.ts) until a person retries it. `earlier`: the task's final records
 * before this one, oldest first.
 */
export function crashClosing(inGate: boolean, earlier: readonly Pick<EpisodeSummary, 'reason'>[]): Closing {
  if (!inGate) return { outcome: 'abandoned', reason: 'orchestrator-stopped', message: 'the orchestrator stopped before this episode ended', signature: null };
  if (earlier.at(-1)?.reason !== 'gate-crashed')
    return { outcome: 'abandoned', reason: 'gate-crashed', message: "the orchestrator died while this episode's gate ran", signature: null };
  return {
    outcome: 'failed',
    reason: 'poison-pill',
    message: "the orchestrator died while this task's gate ran, for the second time in a row: the task is blocked (genesis task retry <task> to try again)",
    signature: 'poison-pill',
  };
}

export interface Decision {
  state: PolicyState;
  commands: PolicyCommand[];
}

type OptionalConfig = 'cooldownMs' | 'pastEvidence' | 'ratchet' | 'reviewAll' | 'reviewPollMs' | 'race' | 'stopOnWin';

const NO_TALLY: Tally = { accepted: 0, rejected: 0, failed: 0, abandoned: 0, outrun: 0, episodes: 0 };

export function initialPolicyState(input: {
  config: Omit<PolicyConfig, OptionalConfig> & Partial<Pick<PolicyConfig, OptionalConfig>>;
  tasks: readonly TaskSpec[];
  done: ReadonlySet<string>;
  /** Every episode of the world (summaries suffice: see ledger-summary.ts). */
  records: Iterable<EpisodeSummary>;
  /** Episodes the run takes over (running on workers, or waiting for integration after a restart). */
  running?: ReadonlyMap<string, string>;
  integrating?: ReadonlyMap<string, string>;
  /** Changes waiting for review, found in the ledger. */
  reviewing?: ReadonlyMap<string, ReviewingChange>;
  /** Races some of whose racers the run takes over (see racesOf). */
  races?: ReadonlyMap<string, RaceState>;
  retries?: readonly RetryFacts[];
  now: number;
}): PolicyState {
  return {
    config: { cooldownMs: 2_000, pastEvidence: false, ratchet: false, reviewAll: false, reviewPollMs: 2_000, race: 1, stopOnWin: true, ...input.config },
    tasks: input.tasks,
    done: input.done,
    ledger: policyLedgerOf(input.records),
    running: input.running ?? new Map(),
    integrating: input.integrating ?? new Map(),
    reviewing: input.reviewing ?? new Map(),
    races: input.races ?? new Map(),
    held: new Map(),
    cooldown: new Map(),
    outages: new Map(),
    hold: null,
    retries: input.retries ?? [],
    stop: null,
    finished: null,
    closing: false,
    now: input.now,
    tally: NO_TALLY,
  };
}

/** One step of the policy. Pure: the same state and event always give the same decision. */
export function decide(state: PolicyState, event: PolicyEvent): Decision {
  switch (event.type) {
    case 'tick':
      return plan({ ...state, now: event.now, retries: event.retries ?? state.retries });
    case 'started': {
      const ledger = withRecord(state.ledger, event.record);
      const running = new Map(state.running).set(event.record.id, event.record.task);
      const races = joinRace(state.races, event.record);
      return { state: { ...state, ledger, running, races, tally: { ...state.tally, episodes: state.tally.episodes + 1 } }, commands: [] };
    }
    case 'starts-done':
      return afterStarts({ ...state, now: event.now }, event.refused ?? []);
    case 'result':
      return judgeResult(state, event.result, event.record);
    case 'passed': {
      const task = state.running.get(event.id);
      if (task === undefined) return { state, commands: [] };
      const running = new Map(state.running);
      running.delete(event.id);
      return plan({ ...state, running, integrating: new Map(state.integrating).set(event.id, task) });
    }
    case 'finished':
      return finished(state, event);
    case 'landed': {
      const done = new Set(state.done).add(event.task);
      const commands: PolicyCommand[] = state.stop ? [] : [{ type: 'check-evidence' }];
      const config = event.ratchet === undefined ? state.config : { ...state.config, ratchet: event.ratchet };
      return { state: { ...state, config, done, tasks: event.tasks }, commands };
    }
    case 'steered': {
      const config = event.ratchet === undefined ? state.config : { ...state.config, ratchet: event.ratchet };
      // A run that found nothing left to do (all done, or all blocked) looks again: the change may have given it work.
      const idle = state.stop !== null && (state.stop.kind === 'done' || state.stop.kind === 'blocked') && !state.closing;
      const again = idle ? { ...state, stop: null, finished: null } : state;
      const decision = plan({ ...again, config, tasks: event.tasks, done: new Set(event.done) });
      return again.stop ? decision : { state: decision.state, commands: [{ type: 'check-evidence' }, ...decision.commands] };
    }
    case 'evidence':
      if (!event.passed || state.stop || state.config.pastEvidence) return settle(state);
      return settle({ ...state, stop: { kind: 'evidence', command: event.command, ...pendingAfterEvidence(state) } });
    case 'withdrawn': {
      const integrating = new Map(state.integrating);
      integrating.delete(event.id);
      return settle({ ...state, integrating });
    }
    case 'reviewed':
      return reviewed(state, event);
    case 'aborted':
      return interrupted(state);
  }
}

/** Whether a change of this task waits for a person after its gate. */
/**
 * Whether an episode whose gate failed on a place rebuilt under it may hand its change to the
 * integration queue unjudged, the queue's verification being its gate: not when a person reviews
 * the change (they must see a verdict) nor when it races (the first pass wins the race at once).
 */
export function mayHandOver(state: PolicyState, id: string, task: string): boolean {
  return state.running.has(id) && !needsReview(state, task) && raceOf(state, id) === null;
}

function needsReview(state: PolicyState, task: string): boolean {
  return state.config.reviewAll || state.tasks.find((t) => t.id === task)?.review === true;
}

/**
 * A person's decision on a change waiting for review. Approved, it joins the integration queue
 * (verified again on the accepted head if that moved since its gate); rejected, its record is
 * closed (then `finished` counts the failure, and the task is tried again with the note). A run
 * that is stopping leaves decisions to the next run.
 */
function reviewed(state: PolicyState, event: Extract<PolicyEvent, { type: 'reviewed' }>): Decision {
  const waiting = state.reviewing.get(event.id);
  if (!waiting || state.stop) return { state, commands: [] };
  if (event.decision === 'reject') return { state, commands: [{ type: 'close-review', id: event.id, note: event.note }] };
  const reviewing = new Map(state.reviewing);
  reviewing.delete(event.id);
  const integrating = new Map(state.integrating).set(event.id, waiting.task);
  return { state: { ...state, reviewing, integrating }, commands: [{ type: 'integrate', change: waiting.change }] };
}

/**
 * An interrupt stops the run: the changes waiting for integration are withdrawn (their passing
 * records stay open, and the next run takes them up again) and the episodes are told to stop. In
 * process the run ends once they have; episodes on workers elsewhere keep running, and the run ends
 * at once: the next run takes them back. A run that already had its stop reason keeps it.
 */
function interrupted(state: PolicyState): Decision {
  const decision = state.stop
    ? settle(state)
    : settle({ ...state, stop: { kind: 'interrupted' }, closing: true }, [{ type: 'withdraw-changes' }, { type: 'stop-episodes' }]);
  if (!state.config.distributed || decision.state.finished) return decision;
  const reason: StopReason = { kind: 'interrupted' };
  return { state: { ...decision.state, finished: reason }, commands: [...decision.commands, { type: 'finish', reason }] };
}

/**
 * What a worker's result comes to. A result claiming `passed` counts only when the ledger agrees
 * (see forgedResultProblem); a forged one closes its episode as rejected and nothing lands.
 */
function judgeResult(state: PolicyState, result: EpisodeResult, record: EpisodeRecord | null): Decision {
  const id = result.episodeId;
  if (!state.running.has(id)) return { state, commands: [{ type: 'drop-result', id }] };
  const race = raceOf(state, id);
  // A racer of a decided race is outrun however it ended: the task is the winner's now.
  if (race && race.state.winner !== null) return { state, commands: [{ type: 'outrun', id, winner: race.state.winner }] };
  if (result.verdict !== 'passed' && result.verdict !== 'queued') {
    const fatal = result.fatal ? { reason: result.reason ?? ('worker-error' satisfies EpisodeReason), message: result.message ?? '' } : null;
    const hold = result.holdUntil === undefined ? null : { untilMs: result.holdUntil, message: result.message ?? '' };
    return { state, commands: [{ type: 'close-episode', result, fatal, hold }] };
  }
  // The run hands a change to the queue only when nobody else must judge it first (mayHandOver).
  const handedWrongly =
    result.verdict === 'queued' && !mayHandOver(state, id, result.task) ? 'a change that races or waits for review was handed to the queue unjudged' : null;
  const forged = handedWrongly ?? forgedResultProblem(record, result);
  if (forged) {
    const message = `a result claimed the gate passed, but the ledger does not agree: ${forged}`;
    const closing: Closing = { outcome: 'rejected', reason: 'unverified-result', message, signature: 'unverified-result' };
    return { state, commands: [{ type: 'refuse-result', id, record, closing }] };
  }
  const change: IntegratingChange = {
    id,
    task: result.task,
    candidate: result.candidate!,
    base: result.gatedOn ?? result.base,
    ...(result.source ? { source: result.source } : {}),
    ...(result.verdict === 'queued' ? { ungated: true } : {}),
  };
  if (!race) return goOn(state, change);
  if (!state.config.ratchet) return winRace(state, race.id, change);
  // A ratchet race waits for every racer: the highest score wins, not the first.
  const pass: RacePass = { change, score: record?.gate?.score ?? 0, size: record?.changedFiles.length ?? 0 };
  const races = new Map(state.races).set(race.id, { ...race.state, passes: [...race.state.passes, pass] });
  return decideRatchetRace({ ...state, races }, race.id);
}

/** A passing change goes on: it waits for a person (`review`), or joins the integration queue. */
function goOn(state: PolicyState, change: IntegratingChange): Decision {
  if (needsReview(state, change.task)) {
    const running = new Map(state.running);
    running.delete(change.id);
    const planned = plan({ ...state, running, reviewing: new Map(state.reviewing).set(change.id, { task: change.task, change }) });
    return { state: planned.state, commands: [{ type: 'park', change }, ...planned.commands] };
  }
  const passed = decide(state, { type: 'passed', id: change.id });
  return { state: passed.state, commands: [...passed.commands, { type: 'integrate', change }] };
}

/** The race is decided for `change`: it goes on, the other passes held are outrun, and (with stopOnWin) the racers still working are stopped. */
function winRace(state: PolicyState, raceId: string, change: IntegratingChange, held: readonly RacePass[] = []): Decision {
  const race = state.races.get(raceId)!;
  const races = new Map(state.races).set(raceId, { ...race, winner: change.id, passes: [] });
  const outrun: PolicyCommand[] = held.filter((p) => p.change.id !== change.id).map((p) => ({ type: 'outrun', id: p.change.id, winner: change.id }));
  const working = race.racers.filter((r) => r !== change.id && state.running.has(r) && !held.some((p) => p.change.id === r));
  const stop: PolicyCommand[] = state.config.stopOnWin && working.length > 0 ? [{ type: 'stop-racers', ids: working }] : [];
  const next = goOn({ ...state, races }, change);
  return { state: next.state, commands: [...next.commands, ...outrun, ...stop] };
}

/**
 * A ratchet race is decided once none of its racers is still working: the pass with the highest
 * score wins, a tie goes to the smaller change, then to the earlier racer. With no pass, the
 * race simply ends (each racer's own failure counts).
 */
function decideRatchetRace(state: PolicyState, raceId: string): Decision {
  const race = state.races.get(raceId);
  if (!race || race.winner !== null || race.passes.length === 0) return { state, commands: [] };
  const working = race.racers.filter((r) => state.running.has(r) && !race.passes.some((p) => p.change.id === r));
  if (working.length > 0) return { state, commands: [] };
  const best = [...race.passes].sort((a, b) => b.score - a.score || a.size - b.size)[0]!;
  return winRace(state, raceId, best.change, race.passes);
}

/** The race an episode runs in, if any. */
function raceOf(state: PolicyState, id: string): { id: string; state: RaceState } | null {
  for (const [raceId, race] of state.races) if (race.racers.includes(id)) return { id: raceId, state: race };
  return null;
}

/** A started episode joins its race (the record names it). */
function joinRace(races: ReadonlyMap<string, RaceState>, record: EpisodeRecord): ReadonlyMap<string, RaceState> {
  if (!record.race) return races;
  const race = races.get(record.race) ?? { task: record.task, racers: [], winner: null, passes: [] };
  return new Map(races).set(record.race, { ...race, racers: [...race.racers, record.id] });
}

/**
 * The races of the racers a starting run takes over (their records name their race): one whose
 * racer passed its gate (it waits for integration or review) is won by it, the others still
 * running are outrun when they end. `passed`: the racers that passed, the first of each race the
 * winner; the run closes any other of them as outrun before it starts (recoverRun).
 */
export function racesOf(
  taken: readonly Pick<EpisodeRecord, 'id' | 'task' | 'race'>[],
  passed: ReadonlySet<string>,
): { races: Map<string, RaceState>; outrun: Array<{ id: string; winner: string }> } {
  const races = new Map<string, RaceState>();
  const outrun: Array<{ id: string; winner: string }> = [];
  for (const r of [...taken].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (!r.race) continue;
    const race = races.get(r.race) ?? { task: r.task, racers: [], winner: null, passes: [] };
    let winner = race.winner;
    if (passed.has(r.id)) {
      if (winner === null) winner = r.id;
      else outrun.push({ id: r.id, winner });
    }
    races.set(r.race, { ...race, racers: [...race.racers, r.id], winner });
  }
  return { races, outrun };
}

/**
 * Racers a run takes over that have nothing left to race for: their race was decided before the
 * last run stopped (a racer passed), or their task has landed. The stop for them may never have
 * gone out (a scheduler killed between deciding and stopping), so the run sends it again; each
 * then ends as any stopped racer does.
 */
export function racersToStop(state: PolicyState): string[] {
  if (!state.config.stopOnWin) return [];
  return [...state.races.values()].flatMap((race) =>
    race.winner !== null || state.done.has(race.task) ? race.racers.filter((id) => id !== race.winner && state.running.has(id)) : [],
  );
}

/** A race none of whose racers is busy any more is over. */
function endRaces(state: PolicyState): ReadonlyMap<string, RaceState> {
  const busy = (id: string) => state.running.has(id) || state.integrating.has(id) || state.reviewing.has(id);
  const over = [...state.races].filter(([, race]) => !race.racers.some(busy)).map(([id]) => id);
  if (over.length === 0) return state.races;
  const races = new Map(state.races);
  for (const id of over) races.delete(id);
  return races;
}

/**
 * The statuses the policy decides on: the ledger's, as `task retry` and the dashboard derive them.
 * A broken base blocks its task through its record (see deriveWorldTaskStatuses), so a person's
 * retry lifts it in a running run too; `held` only remembers the message.
 */
export function taskStatuses(state: PolicyState): Map<string, RetriedTaskStatus> {
  const busy = new Set([...state.running.values(), ...state.integrating.values(), ...[...state.reviewing.values()].map((r) => r.task)]);
  const { maxAttempts, blockOnRepeat } = state.config;
  return deriveWorldTaskStatuses({
    manifest: { tasks: [...state.tasks], retry: { maxAttempts, blockOnRepeat } },
    done: state.done,
    // Only tasks not done yet: a done task is done whatever its episodes say, so the episodes of a long history cost nothing here.
    episodes: episodesOf(
      state.ledger,
      state.tasks.filter((t) => !state.done.has(t.id)).map((t) => t.id),
    ),
    running: busy,
    retries: state.retries,
  });
}

/** When the loop must wake up by itself: the end of a cooldown or of the hours budget (ms), or null. */
export function nextWake(state: PolicyState): number | null {
  let wake = Infinity;
  for (const until of state.cooldown.values()) if (until > state.now) wake = Math.min(wake, until);
  if (state.hold && state.hold.untilMs > state.now) wake = Math.min(wake, state.hold.untilMs);
  // A decision is written to the world by another process: looked for by the clock.
  if (state.reviewing.size > 0 && !state.stop) wake = Math.min(wake, state.now + state.config.reviewPollMs);
  const first = state.ledger.firstStartMs;
  if (state.config.budgets.maxHours !== undefined && first !== null) wake = Math.min(wake, first + state.config.budgets.maxHours * 3_600_000 + 50);
  return Number.isFinite(wake) ? wake : null;
}

function plan(state: PolicyState): Decision {
  if (state.stop) return settle(state);
  const statuses = taskStatuses(state);
  const busy = state.running.size + state.integrating.size;
  const idle = busy === 0 ? idleStop(state.tasks, statuses) : null;
  if (idle) return settle({ ...state, stop: idle });
  const budget = budgetStop(state.config.budgets, state.ledger.count, hoursUsed(state), state.ledger.spent);
  if (budget && busy === 0) return settle({ ...state, stop: budget });
  if (budget?.kind === 'budget' && budget.budget !== 'maxEpisodes' && !state.config.distributed) {
    // Budgets are hard: episodes still running when one is crossed are stopped (their work is quarantined).
    return settle({ ...state, stop: budget, closing: true }, [{ type: 'stop-episodes' }]);
  }
  if (budget || state.closing) return settle(state);
  // Held by a usage limit: nothing starts until it resets (nextWake wakes the loop then).
  if (isHeld(state)) return settle(state);
  const free = state.config.parallelism - state.running.size;
  const left = (state.config.budgets.maxEpisodes ?? Infinity) - state.ledger.count;
  const limit = Math.min(free, left);
  if (limit <= 0) return settle(state);
  const ready = pickReadyTasks(state.tasks, statuses, Infinity, (t) => (state.cooldown.get(t.id) ?? 0) <= state.now);
  if (ready.length === 0) return afterStarts(state);
  const tasks = ready.map((task) => {
    const status = statuses.get(task.id);
    return {
      task,
      attempt: (status?.failures ?? 0) + 1,
      round: (status?.failuresSinceRetry ?? 0) + 1,
      earlier: earlierAttempts(state, task.id),
      // A race is never wider than the parallelism, nor than the episodes the budget has left.
      racers: Math.max(1, Math.min(task.race ?? state.config.race, state.config.parallelism, left)),
    };
  });
  return { state, commands: [{ type: 'start', tasks, limit }] };
}

/**
 * After starting what it could: with nothing running, nothing integrating and nothing cooling down,
 * the run is stuck. A task whose lease was refused then cools down (and is tried again) instead:
 * while something of this run is busy, the next event tries it again anyway.
 */
function afterStarts(state: PolicyState, refused: readonly string[] = []): Decision {
  if (state.stop || state.running.size + state.integrating.size > 0) return settle(state);
  if (refused.length > 0) return settle(leaseWait(state, refused));
  if ([...state.cooldown.values()].some((until) => until > state.now) || isHeld(state)) return settle(state);
  if (state.reviewing.size > 0) {
    // Nothing else can go on before a person decides: the run ends, and the next one (or a decision meanwhile) goes on.
    const episodes = [...state.reviewing].map(([id, r]) => ({ id, task: r.task }));
    return settle({ ...state, stop: { kind: 'awaiting-review', episodes } });
  }
  const statuses = taskStatuses(state);
  const waiting = state.tasks.filter((t) => statuses.get(t.id)?.state === 'pending').map((t) => ({ task: t.id, on: 'unschedulable' }));
  return settle({ ...state, stop: { kind: 'blocked', blocked: [], waiting } });
}

function finished(state: PolicyState, event: Extract<PolicyEvent, { type: 'finished' }>): Decision {
  const { record } = event;
  if (!state.running.has(record.id) && !state.integrating.has(record.id) && !state.reviewing.has(record.id)) return { state, commands: [] };
  const running = new Map(state.running);
  const integrating = new Map(state.integrating);
  const reviewing = new Map(state.reviewing);
  running.delete(record.id);
  integrating.delete(record.id);
  reviewing.delete(record.id);
  const outcome = record.outcome === null || record.outcome === 'awaiting-review' ? 'abandoned' : record.outcome;
  const tally = { ...state.tally, [outcome]: state.tally[outcome] + 1 };
  let held = state.held;
  if (BROKEN_BASE_REASONS.has(record.reason ?? '')) held = new Map(held).set(record.task, record.message ?? '');
  // An outage (a transient reason, or one this version does not know) cools the task down, longer each time in a row.
  const outage = outcome === 'abandoned' && (reasonTraits(record.reason)?.retryable ?? true);
  const streak = outage ? (state.outages.get(record.task) ?? 0) + 1 : 0;
  const outages = new Map(state.outages);
  if (streak > 0) outages.set(record.task, streak);
  else outages.delete(record.task);
  let cooldown = state.cooldown;
  if (outage) cooldown = new Map(cooldown).set(record.task, event.now + outageCooldownMs(state.config, streak));
  const stop = !state.stop && event.fatal ? { kind: 'circuit-open' as const, reason: event.fatal.reason, message: event.fatal.message } : state.stop;
  const ledger = withRecord(state.ledger, record);
  const hold = event.hold && event.hold.untilMs > (state.hold?.untilMs ?? 0) ? event.hold : state.hold;
  const next: PolicyState = { ...state, now: event.now, ledger, running, integrating, reviewing, tally, held, cooldown, outages, stop, hold };
  // A winner that did not land (rejected on the tip, or in review) gives the race back to the racers still working.
  const race = raceOf(next, record.id);
  const reopened =
    race && race.state.winner === record.id && record.outcome !== 'accepted'
      ? { ...next, races: new Map(next.races).set(race.id, { ...race.state, winner: null }) }
      : next;
  // A racer that ended may have been the last a ratchet race waited for.
  const decided = race ? decideRatchetRace(reopened, race.id) : { state: reopened, commands: [] };
  const planned = plan({ ...decided.state, races: endRaces(decided.state) });
  return { state: planned.state, commands: [...decided.commands, ...planned.commands] };
}

/** Whether a usage limit holds the world now. */
export function isHeld(state: PolicyState): boolean {
  return state.hold !== null && state.hold.untilMs > state.now;
}

/** Tasks whose lease another holder keeps wait as after an outage: a cooldown, longer each time in a row. */
function leaseWait(state: PolicyState, tasks: readonly string[]): PolicyState {
  const outages = new Map(state.outages);
  const cooldown = new Map(state.cooldown);
  for (const task of tasks) {
    const streak = (outages.get(task) ?? 0) + 1;
    outages.set(task, streak);
    cooldown.set(task, state.now + outageCooldownMs(state.config, streak));
  }
  return { ...state, outages, cooldown };
}

/** The wait before a task's next episode after `streak` outages in a row. No jitter: the policy is pure, and tasks meet outages at different times. */
function outageCooldownMs(config: PolicyConfig, streak: number): number {
  const policy = backoffPolicy({ initialMs: config.cooldownMs, maxMs: Math.max(config.cooldownMs, 60_000) });
  return backoffDelay(policy, streak, 0) ?? policy.maxMs;
}

/**
 * The earlier attempts a new episode's prompt reflects on: the task's last ten that ended without
 * landing, oldest first. The worker reads just these, not the whole ledger.
 */
function earlierAttempts(state: PolicyState, task: string): string[] {
  return episodesOfTask(state.ledger, task)
    .filter((r) => r.status === 'final' && r.outcome !== 'accepted')
    .map((r) => r.id)
    .slice(-10);
}

/** With a stop reason and nothing left running or integrating, the run ends. */
function settle(state: PolicyState, commands: PolicyCommand[] = []): Decision {
  if (state.stop && state.running.size === 0 && state.integrating.size === 0)
    return { state: { ...state, finished: state.stop }, commands: [...commands, { type: 'finish', reason: state.stop }] };
  return { state, commands };
}

/** Tasks the evidence leaves undone, so `run` can say why they did not run and how to run them. */
function pendingAfterEvidence(state: PolicyState): { pending?: string[] } {
  const statuses = taskStatuses(state);
  const pending = state.tasks.filter((t) => ['pending', 'running'].includes(statuses.get(t.id)?.state ?? '')).map((t) => t.id);
  return pending.length > 0 ? { pending } : {};
}

function hoursUsed(state: PolicyState): number {
  const first = state.ledger.firstStartMs;
  return first === null ? 0 : (state.now - first) / 3_600_000;
}
