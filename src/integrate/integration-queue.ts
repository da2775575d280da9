import type { RejectionReason } from '../errors/rejection-reasons.js';

/**
 * The integration queue, as a pure state machine: changes that passed their own gate wait here in
 * order, each built as a speculative commit on top of the one ahead of it (the first on the
 * accepted head). Each speculative commit is verified in parallel, up to `slots` at a time; when
 * those ahead have landed, a verified commit lands by compare-and-swap as it is, with no further
 * gate, so every accepted commit is exactly a tree that passed the gate. A failure rejects that
 * change alone and rebuilds those behind it on the commit it would have extended. A textual
 * conflict is found when a change is built on its tip, without a gate.
 *
 * `advance(state, event) → { state, commands }`: the loop carries out the commands (build a
 * commit with git, run a verification on a worker, compare-and-swap the branch) and feeds back
 * what happened. Results of a superseded build (an older `generation`) are ignored.
 */
export interface QueuedChange {
  /** The episode whose change this is. */
  id: string;
  task: string;
  /** The episode's candidate commit, whose parent is its base. */
  candidate: string;
  base: string;
  /**
   * When the episode gated its change on a speculative tip (`base` is that tip), the change as the
   * agent made it on the accepted history: merged instead of `candidate` when the change must move
   * to another tip, so that nothing of a tip that did not land comes with it.
   */
  source?: string;
  /** Reserved before its episode's gate ran: no build of it is gated yet, even one on its own base. */
  ungated?: boolean;
  /** What its agent reported the episode cost (its commit's Genesis-Cost), when the record does not say yet. */
  costUsd?: number | null;
}

export type EntryStage =
  /** Waiting to be built on the commit ahead of it (that commit may not exist yet). */
  | 'waiting'
  /** A build command is out. */
  | 'building'
  /** Built; waits for a verification slot. */
  | 'built'
  /** Reserved by its episode, whose own gate is judging this very commit now. */
  | 'gating'
  | 'verifying'
  /** Passed on its tip; lands once every change ahead has. */
  | 'verified'
  | 'landing';

export interface QueueEntry extends QueuedChange {
  stage: EntryStage;
  /** Bumped whenever the entry is rebuilt: results of an older generation are stale. */
  generation: number;
  /** The commit it is built on (the accepted head or the speculative commit ahead). */
  onto: string | null;
  /** Its speculative commit: `onto` plus this change. */
  commit: string | null;
  /** Whether the commit still needs a gate: false when it is exactly the candidate its episode's gate passed. */
  needsGate: boolean;
  /** Its tip failed without it too: verified again only once everything ahead has landed. */
  waitFront?: boolean;
  /**
   * Reserved when its agent finished, before its own gate: it may not land until its episode's
   * result arrives (the lander needs the record that result closes), whatever verified it.
   */
  pending?: boolean;
}

export interface IntegrationState {
  /** The accepted head as this queue last moved it (or saw it moved). */
  head: string;
  entries: readonly QueueEntry[];
  /** How many verifications may run at once. */
  slots: number;
}

export type IntegrationEvent =
  | { type: 'join'; change: QueuedChange }
  /**
   * An episode whose agent finished takes its place now, before its own gate: its commit is built
   * on the tip and its episode gates exactly that commit, so that a change joining behind it is
   * built (and gated) on top of it at once, and a change that lands in that order is gated once.
   */
  | { type: 'reserve'; change: QueuedChange }
  /**
   * The episode's own gate passed on `commit` (the one its reservation built, or another when it
   * gated elsewhere): its change as it now stands. If it is still this entry's commit, the entry is
   * verified; otherwise it is built again from `change` where it stands.
   */
  | { type: 'gated'; id: string; commit: string; change: QueuedChange }
  | { type: 'built'; id: string; generation: number; commit: string; needsGate: boolean }
  /** The build found the change cannot go on its tip (a conflict, nothing left to change, its task gone). */
  | { type: 'build-rejected'; id: string; generation: number; reason: RejectionReason; message: string }
  | { type: 'verified'; id: string; generation: number }
  | { type: 'verify-failed'; id: string; generation: number; reason: RejectionReason; message: string }
  /**
   * The tip failed the gate without this change too: the fault may be a change ahead that has not
   * landed yet, so the verdict waits until this change is at the front.
   */
  | { type: 'verify-inconclusive'; id: string; generation: number }
  | { type: 'landed'; id: string; commit: string }
  /** The compare-and-swap lost: the accepted head is now `head`, which none of these commits extends. */
  | { type: 'head-moved'; head: string }
  /** Drop a change without a verdict (the run is stopping; its record stays open for the next run). */
  | { type: 'withdraw'; id: string };

export type IntegrationCommand =
  /** With `reserve`: the commit its episode will gate itself (its trailers name the episode's gate). */
  | { type: 'build'; id: string; generation: number; change: QueuedChange; onto: string; reserve?: boolean }
  | { type: 'verify'; id: string; generation: number; change: QueuedChange; commit: string; onto: string }
  | { type: 'land'; id: string; change: QueuedChange; commit: string; expected: string; verifiedOn: string | null }
  | { type: 'reject'; id: string; generation: number; change: QueuedChange; reason: RejectionReason; message: string }
  /** Verifications of these stale generations may be cancelled: their results will be ignored. */
  | { type: 'cancel'; jobs: Array<{ id: string; generation: number }> };

export interface IntegrationStep {
  state: IntegrationState;
  commands: IntegrationCommand[];
}

export function emptyIntegration(head: string, slots: number): IntegrationState {
  return { head, entries: [], slots: Math.max(1, slots) };
}

export function advance(state: IntegrationState, event: IntegrationEvent): IntegrationStep {
  switch (event.type) {
    case 'join': {
      if (state.entries.some((e) => e.id === event.change.id)) return { state, commands: [] };
      const entry: QueueEntry = { ...event.change, stage: 'waiting', generation: 1, onto: null, commit: null, needsGate: true };
      return pump({ ...state, entries: [...state.entries, entry] }, []);
    }
    case 'reserve': {
      if (state.entries.some((e) => e.id === event.change.id)) return { state, commands: [] };
      const entry: QueueEntry = { ...event.change, ungated: true, stage: 'waiting', generation: 1, onto: null, commit: null, needsGate: true, pending: true };
      return pump({ ...state, entries: [...state.entries, entry] }, []);
    }
    case 'gated':
      return gated(state, event);
    case 'built':
      return current(state, event, ['building'], (e) => ({ ...e, stage: builtStage(e, event.needsGate), commit: event.commit, needsGate: event.needsGate }));
    case 'verified':
      return current(state, event, ['verifying'], (e) => ({ ...e, stage: 'verified' }));
    case 'verify-inconclusive': {
      const at = state.entries.findIndex((e) => e.id === event.id && e.generation === event.generation && e.stage === 'verifying');
      if (at < 0) return { state, commands: [] };
      const entry = state.entries[at]!;
      // At the front, the tip is the accepted head itself: the head is broken, and that is a verdict.
      if (entry.onto === state.head)
        return advance(state, {
          type: 'verify-failed',
          id: event.id,
          generation: event.generation,
          reason: 'broken-base',
          message: 'the accepted head fails its gate without this change',
        });
      return current(state, event, ['verifying'], (e) => ({ ...e, stage: 'built', waitFront: true }));
    }
    case 'build-rejected':
    case 'verify-failed': {
      const at = state.entries.findIndex((e) => e.id === event.id && e.generation === event.generation);
      if (at < 0) return { state, commands: [] };
      const entry = state.entries[at]!;
      // A change whose episode has not answered yet is only dropped, never judged: its record is still
      // the worker's to write. If it passes its own gate, it joins again (and is judged then).
      if (entry.pending) return removeAt(state, at, []);
      return removeAt(state, at, [
        { type: 'reject', id: entry.id, generation: entry.generation, change: change(entry), reason: event.reason, message: event.message },
      ]);
    }
    case 'landed': {
      const at = state.entries.findIndex((e) => e.id === event.id);
      if (at !== 0) return { state, commands: [] };
      return pump({ ...state, head: event.commit, entries: state.entries.slice(1) }, []);
    }
    case 'head-moved':
      return rebuildFrom({ ...state, head: event.head }, 0, []);
    case 'withdraw': {
      const at = state.entries.findIndex((e) => e.id === event.id);
      return at < 0 ? { state, commands: [] } : removeAt(state, at, []);
    }
  }
}

/** A reserved change's first build is gated by its episode; any other build needing a gate waits for a slot. */
function builtStage(e: QueueEntry, needsGate: boolean): EntryStage {
  if (e.pending && e.generation === 1) return 'gating';
  return needsGate ? 'built' : 'verified';
}

function gated(state: IntegrationState, event: Extract<IntegrationEvent, { type: 'gated' }>): IntegrationStep {
  const at = state.entries.findIndex((e) => e.id === event.id);
  if (at < 0) return { state, commands: [] };
  const entry = state.entries[at]!;
  const entries = [...state.entries];
  const { ungated: _ungated, ...rest } = entry;
  const known: QueueEntry = { ...rest, ...event.change, pending: false };
  // A change handed over unjudged (its gate judged a place rebuilt under it) is verified by the queue, whatever it names.
  if (entry.stage === 'gating' && entry.commit === event.commit && !event.change.ungated) {
    entries[at] = { ...known, stage: 'verified', needsGate: false };
    return pump({ ...state, entries }, []);
  }
  // Gated elsewhere (its base, a tip that is no longer what is ahead of it): built again where it stands.
  if (entry.stage === 'gating' || entry.stage === 'building') {
    entries[at] = { ...known, stage: 'waiting', generation: entry.generation + 1, onto: null, commit: null, needsGate: true };
    return rebuildFrom({ ...state, entries }, at + 1, []);
  }
  entries[at] = known;
  return pump({ ...state, entries }, []);
}

/**
 * Whether the changes ahead of a reserved change are judged, for its episode whose gate failed on
 * `commit`: 'passed' when its place is still `commit` and every change ahead passed on its tip (so
 * that tip is what lands ahead of it), 'moved' when its place was rebuilt or given up (one ahead
 * failed, or the head moved), null while one ahead is still being judged.
 */
export function judgedAhead(state: IntegrationState, id: string, commit: string): 'passed' | 'moved' | null {
  const at = state.entries.findIndex((e) => e.id === id);
  if (at < 0 || state.entries[at]!.commit !== commit) return 'moved';
  return state.entries.slice(0, at).every((e) => e.stage === 'verified' || e.stage === 'landing') ? 'passed' : null;
}

/** What the queue holds, front first, for status displays. */
export function describeQueue(state: IntegrationState): Array<{ id: string; task: string; stage: EntryStage; onto: string | null; commit: string | null }> {
  return state.entries.map((e) => ({ id: e.id, task: e.task, stage: e.stage, onto: e.onto, commit: e.commit }));
}

function current(
  state: IntegrationState,
  event: { id: string; generation: number },
  stages: EntryStage[],
  update: (e: QueueEntry) => QueueEntry,
): IntegrationStep {
  const at = state.entries.findIndex((e) => e.id === event.id && e.generation === event.generation && stages.includes(e.stage));
  if (at < 0) return { state, commands: [] };
  const entries = [...state.entries];
  entries[at] = update(entries[at]!);
  return pump({ ...state, entries }, []);
}

/** Removes an entry; those behind it were built on its commit, so they are rebuilt. */
function removeAt(state: IntegrationState, at: number, commands: IntegrationCommand[]): IntegrationStep {
  const entries = state.entries.filter((_, i) => i !== at);
  return rebuildFrom({ ...state, entries }, at, commands);
}

function rebuildFrom(state: IntegrationState, from: number, commands: IntegrationCommand[]): IntegrationStep {
  const stale: Array<{ id: string; generation: number }> = [];
  const entries = state.entries.map((e, i) => {
    if (i < from || e.stage === 'waiting') return e;
    if (e.stage === 'verifying' || e.stage === 'built') stale.push({ id: e.id, generation: e.generation });
    return { ...e, stage: 'waiting' as const, generation: e.generation + 1, onto: null, commit: null, needsGate: true, waitFront: false };
  });
  return pump({ ...state, entries }, stale.length > 0 ? [...commands, { type: 'cancel', jobs: stale }] : commands);
}

/** Issues every build, verification and landing the state allows now. */
function pump(state: IntegrationState, commands: IntegrationCommand[]): IntegrationStep {
  const entries = [...state.entries];
  const out = [...commands];
  // Builds go in order: each needs the commit of the one ahead.
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.stage !== 'waiting') continue;
    const onto = i === 0 ? state.head : entries[i - 1]!.commit;
    if (onto === null) break;
    entries[i] = { ...e, stage: 'building', onto };
    out.push({ type: 'build', id: e.id, generation: e.generation, change: change(e), onto, ...(e.pending && e.generation === 1 ? { reserve: true } : {}) });
  }
  let verifying = entries.filter((e) => e.stage === 'verifying').length;
  for (let i = 0; i < entries.length && verifying < state.slots; i++) {
    const e = entries[i]!;
    if (e.stage !== 'built' || (e.waitFront && e.onto !== state.head)) continue;
    entries[i] = { ...e, stage: 'verifying' };
    verifying++;
    out.push({ type: 'verify', id: e.id, generation: e.generation, change: change(e), commit: e.commit!, onto: e.onto! });
  }
  const front = entries[0];
  if (front?.stage === 'verified' && front.onto === state.head && !front.pending) {
    entries[0] = { ...front, stage: 'landing' };
    out.push({
      type: 'land',
      id: front.id,
      change: change(front),
      commit: front.commit!,
      expected: state.head,
      verifiedOn: front.needsGate ? front.onto : null,
    });
  }
  return { state: { ...state, entries }, commands: out };
}

function change(e: QueueEntry): QueuedChange {
  return {
    id: e.id,
    task: e.task,
    candidate: e.candidate,
    base: e.base,
    ...(e.source ? { source: e.source } : {}),
    ...(e.ungated ? { ungated: true } : {}),
    ...(e.costUsd === undefined ? {} : { costUsd: e.costUsd }),
  };
}
