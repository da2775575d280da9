import { markBaselineFinal } from '../gate/test-baseline.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { Ledger } from '../ledger/ledger.js';
import type { WorldRepo } from '../world/world-repo.js';
import { buildTip, verificationId } from './build-tip.js';
import {
  advance,
  describeQueue,
  emptyIntegration,
  judgedAhead,
  type IntegrationCommand,
  type IntegrationEvent,
  type IntegrationState,
  type QueuedChange,
} from './integration-queue.js';
import type { Lander } from './lander.js';
import type { VerificationResult } from '../queue/verification-job.js';
import { type VerificationLedger, verificationLedgerOf } from './verification/ledger.js';
import type { VerificationQueue } from '../queue/verification-queue.js';
import { isChargedReason, reasonOnTip } from '../errors/rejection-reasons.js';

/** What the integration stage tells the run loop: a change landed, or ended without landing. */
export type IntegrationOutcome = { type: 'landed'; record: EpisodeRecord; head: string } | { type: 'rejected'; record: EpisodeRecord };

export interface IntegrationStageDeps {
  world: WorldRepo;
  ledger: Ledger;
  lander: Lander;
  verifications: VerificationQueue;
  /** Verifications running at once. */
  slots: number;
  head: string;
  worldName: string;
  onOutcome: (outcome: IntegrationOutcome) => Promise<void>;
  onChange?: (entries: ReturnType<typeof describeQueue>) => void;
}

/**
 * The integration stage: carries out the pure integration queue's commands against git (builds),
 * the verification queue (gates on workers) and the lander (compare-and-swap, ledger). Events are
 * handled one at a time, so the queue's state is never seen half-changed.
 */
export class IntegrationStage {
  private state: IntegrationState;
  private readonly joinedAt = new Map<string, number>();
  private readonly verificationLedger: VerificationLedger;
  private chain: Promise<void> = Promise.resolve();
  /** Episodes waiting for the changes ahead of theirs to be judged, or watching their place (see judgedAhead): asked again after every event. */
  private readonly aheadWaiters = new Set<{ ask: () => 'passed' | 'moved' | null; resolve: (answer: 'passed' | 'moved' | null) => void }>();

  constructor(private readonly deps: IntegrationStageDeps) {
    this.state = emptyIntegration(deps.head, deps.slots);
    this.verificationLedger = verificationLedgerOf(deps.world);
  }

  get size(): number {
    return this.state.entries.length;
  }

  /** The commit a change joining now would be built on, or null while one ahead of it is still being built. */
  tip(): string | null {
    const last = this.state.entries.at(-1);
    return last ? last.commit : this.state.head;
  }

  describe(): ReturnType<typeof describeQueue> {
    return describeQueue(this.state);
  }

  join(change: QueuedChange): Promise<void> {
    this.joinedAt.set(change.id, performance.now());
    return this.handle({ type: 'join', change });
  }

  /**
   * An episode whose agent finished takes its place in the queue before its own
   * gate, and gets the commit to gate: its change built on the speculative tip (the accepted head
   * plus every change ahead, gated or still gating). Null when it cannot go there (a conflict with a
   * change ahead): it then gates on its base and joins when it passed.
   */
  async reserve(change: QueuedChange): Promise<{ onto: string; commit: string; speculative: boolean } | null> {
    // A second run of the same episode (its job handed out again) made another change: the first one's place goes.
    const held = this.state.entries.find((e) => e.id === change.id);
    if (held && (held.source ?? held.candidate) !== change.candidate) await this.giveUp(change.id);
    await this.handle({ type: 'reserve', change });
    const entry = this.state.entries.find((e) => e.id === change.id);
    if (entry?.stage !== 'gating' || entry.commit === null || entry.onto === null) return null;
    return { onto: entry.onto, commit: entry.commit, speculative: entry.onto !== this.state.head };
  }

  /**
   * For a reserved change whose gate failed on `commit`: how the changes ahead were judged (see
   * judgedAhead), once they are, or null if they are not within `withinMs`.
   */
  judgedAhead(id: string, commit: string, withinMs: number): Promise<'passed' | 'moved' | null> {
    const now = judgedAhead(this.state, id, commit);
    if (now !== null || withinMs <= 0) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiter = {
        ask: () => judgedAhead(this.state, id, commit),
        resolve: (answer: 'passed' | 'moved' | null) => {
          clearTimeout(timer);
          this.aheadWaiters.delete(waiter);
          resolve(answer);
        },
      };
      const timer = setTimeout(() => waiter.resolve(null), withinMs);
      this.aheadWaiters.add(waiter);
    });
  }

  /**
   * A signal aborted when a reserved change's place is no longer `commit` (one ahead failed, the
   * head moved): what its gate judges will not land. `release` when the gate ended.
   */
  watchPlace(id: string, commit: string): { signal: AbortSignal; release(): void } {
    const moved = new AbortController();
    const watcher = {
      ask: () => (judgedAhead(this.state, id, commit) === 'moved' ? 'moved' : null),
      resolve: (answer: 'passed' | 'moved' | null) => {
        this.aheadWaiters.delete(watcher);
        if (answer === 'moved') moved.abort();
      },
    };
    if (watcher.ask() === 'moved') moved.abort();
    else this.aheadWaiters.add(watcher);
    return { signal: moved.signal, release: () => this.aheadWaiters.delete(watcher) };
  }

  /** Whether a change holds a place in the queue (reserved or joined). */
  holds(id: string): boolean {
    return this.state.entries.some((e) => e.id === id);
  }

  /**
   * The episode of a reserved change passed its own gate on `commit`; `change` is what it now names.
   * Its integrate phase starts here, not at its reservation: the gate between them is the episode's own phase.
   */
  gated(change: QueuedChange, commit: string): Promise<void> {
    this.joinedAt.set(change.id, performance.now());
    return this.handle({ type: 'gated', id: change.id, commit, change });
  }

  /** Gives up a change's place without a verdict (its episode failed or was stopped; its record says why). */
  withdraw(id: string): Promise<void> {
    this.joinedAt.delete(id);
    return this.giveUp(id);
  }

  /**
   * Takes a change out of the queue. If its own gate on its reserved tip never reported (its worker
   * died), the gates of the changes behind it, which wait for that tip's test baseline, are told it
   * will not come, so they learn it at once instead of waiting out the gate's timeout.
   */
  private async giveUp(id: string): Promise<void> {
    const entry = this.state.entries.find((e) => e.id === id);
    if (entry?.stage === 'gating' && entry.commit !== null) {
      const tree = await this.deps.world.treeOf(entry.commit);
      await markBaselineFinal(this.deps.world.scratchDir, tree).catch(() => undefined);
    }
    return this.handle({ type: 'withdraw', id });
  }

  /** A verification result from a worker: only a hint until the lander finds its record in the world. */
  verified(result: VerificationResult): Promise<void> {
    // A result about another commit (an earlier run's build of the same change) says nothing about this one.
    const entry = this.state.entries.find((e) => e.id === result.episodeId && e.generation === result.generation);
    if (!entry || entry.commit !== result.commit) return Promise.resolve();
    if (result.ok) return this.handle({ type: 'verified', id: result.episodeId, generation: result.generation });
    if (result.reason === 'broken-base') return this.handle({ type: 'verify-inconclusive', id: result.episodeId, generation: result.generation });
    return this.handle({
      type: 'verify-failed',
      id: result.episodeId,
      generation: result.generation,
      reason: result.reason ?? 'verification-failed',
      message: result.message ?? '',
    });
  }

  /** Drops every change without a verdict (the run is stopping); their records stay open for the next run. */
  async withdrawAll(): Promise<string[]> {
    // From the back: removing one ahead would rebuild (and could land) those behind it.
    const ids = this.state.entries.map((e) => e.id).reverse();
    for (const id of ids) await this.handle({ type: 'withdraw', id });
    return ids;
  }

  /**
   * Runs a person's change (an amendment, a new task) between two events of the queue, so between
   * two landings: the lander stays the one writer of the branch. If `work` moved the branch through
   * the lander, every change waiting is built again on the new head (as after any move of it).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(async () => {
      try {
        return await work();
      } finally {
        const head = this.deps.lander.head;
        if (head !== null && head !== this.state.head) await this.apply({ type: 'head-moved', head });
      }
    });
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Serialised: each event and the commands it causes finish before the next event is applied. */
  private handle(event: IntegrationEvent): Promise<void> {
    const next = this.chain.then(() => this.apply(event));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async apply(event: IntegrationEvent): Promise<void> {
    const step = advance(this.state, event);
    this.state = step.state;
    this.deps.onChange?.(this.describe());
    for (const waiter of [...this.aheadWaiters]) {
      const answer = waiter.ask();
      if (answer !== null) waiter.resolve(answer);
    }
    for (const command of step.commands) {
      const follow = await this.execute(command);
      if (follow) await this.apply(follow);
    }
  }

  private async execute(command: IntegrationCommand): Promise<IntegrationEvent | null> {
    switch (command.type) {
      case 'build': {
        const record = await this.deps.ledger.read(command.id);
        if (!record)
          return {
            type: 'build-rejected',
            id: command.id,
            generation: command.generation,
            reason: 'episode-unknown',
            message: `episode ${command.id} has no ledger record`,
          };
        // A build that throws (a candidate missing from the object store, a git failure) must not leave the entry building for ever.
        const built = await buildTip(this.deps.world, command.change, record, command.onto, command.generation, { reserve: command.reserve === true }).catch(
          (error: unknown) => ({
            ok: false as const,
            reason: 'replay-worker-error' as const,
            message: `the change could not be built on its tip: ${error instanceof Error ? error.message : String(error)}`,
            signature: 'replay-worker-error',
          }),
        );
        if (!built.ok) return { type: 'build-rejected', id: command.id, generation: command.generation, reason: built.reason, message: built.message };
        return { type: 'built', id: command.id, generation: command.generation, commit: built.commit, needsGate: built.needsGate };
      }
      case 'verify':
        await this.deps.verifications.submit({
          verificationId: verificationId(command.id, command.generation, true),
          episodeId: command.id,
          generation: command.generation,
          world: this.deps.worldName,
          task: command.change.task,
          commit: command.commit,
          onto: command.onto,
        });
        return null;
      case 'cancel':
        await this.deps.verifications.cancel(command.jobs.map((j) => verificationId(j.id, j.generation, true)));
        return null;
      case 'land': {
        const entry = this.state.entries.find((e) => e.id === command.id)!;
        const landed = await this.deps.lander.land({
          change: command.change,
          commit: command.commit,
          expected: command.expected,
          verifiedOn: command.verifiedOn,
          generation: entry.generation,
          verificationId: verificationId(command.id, entry.generation, command.verifiedOn !== null),
          startedAt: this.joinedAt.get(command.id) ?? performance.now(),
        });
        if (landed.landed) {
          this.joinedAt.delete(command.id);
          await this.deps.onOutcome({ type: 'landed', record: landed.record, head: command.commit });
          return { type: 'landed', id: command.id, commit: command.commit };
        }
        if (landed.moved) return { type: 'head-moved', head: landed.head };
        return { type: 'verify-failed', id: command.id, generation: entry.generation, reason: landed.reason, message: landed.message };
      }
      case 'reject':
        await this.reject(command);
        return null;
    }
  }

  private async reject(command: Extract<IntegrationCommand, { type: 'reject' }>): Promise<void> {
    const record = await this.deps.ledger.read(command.id);
    this.joinedAt.delete(command.id);
    if (!record || record.status === 'final') return;
    const verification = await this.verificationLedger.read(verificationId(command.id, command.generation, true));
    const log = verification ? await this.verificationLedger.readLog(verification.verificationId) : null;
    // A change handed over unjudged has no gate of its own but this one: its failure is its own gate's, named as such.
    const reason = record.handedOver ? command.reason : reasonOnTip(command.reason);
    // A tip that fails as it already does without the change, or a verifier that died, is not charged to the change.
    const outcome = isChargedReason(reason) ? 'rejected' : 'abandoned';
    const final: EpisodeRecord = {
      ...record,
      status: 'final',
      outcome,
      reason,
      // A handed-over change's gate says it as its own gate would (a hidden check's one message stays one).
      message: record.handedOver ? command.message : `verified on the changes landed or queued ahead of it: ${command.message}`,
      signature: verification?.signature ?? reason,
      gate: verification?.gate ?? record.gate,
      endedAt: new Date().toISOString(),
    };
    await this.deps.ledger.write(final, log ? { gateLog: log } : {});
    await this.deps.onOutcome({ type: 'rejected', record: final });
  }
}
