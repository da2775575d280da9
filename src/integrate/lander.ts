import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { Ledger } from '../ledger/ledger.js';
import { EPISODE_REF_PREFIX } from '../ledger/git-ledger.js';
import type { WorldRepo } from '../world/world-repo.js';
import type { QueuedChange } from './integration-queue.js';
import { type VerificationLedger, type VerificationRecord, verificationLedgerOf } from './verification/ledger.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

export type LandOutcome =
  | { landed: true; record: EpisodeRecord }
  /** The branch is not where the queue expected it: rebuild on `head`. */
  | { landed: false; moved: true; head: string }
  /** The verdict behind the commit cannot be found in the world: the change must not land. */
  | { landed: false; moved: false; reason: RejectionReason; message: string };

/**
 * The only writer of the accepted branch. It moves the branch by compare-and-swap to exactly a
 * verified commit and writes the episode's final record; it never builds or gates anything.
 * Before it swaps, it checks the verdict in the world itself: the episode's own gate record for
 * that exact candidate, or the verification record for that exact speculative commit.
 * A commit that moves the branch outside Genesis is put back and kept under a quarantine ref.
 */
export class Lander {
  private expected: string | null;
  private readonly verifications: VerificationLedger;

  constructor(
    private readonly world: WorldRepo,
    private readonly ledger: Ledger,
    private readonly branch: string,
    startHead: string | null,
  ) {
    this.expected = startHead;
    this.verifications = verificationLedgerOf(world);
  }

  /** The head as this lander last wrote or saw it. */
  get head(): string | null {
    return this.expected;
  }

  /**
   * Puts the branch back if something other than this lander moved it. Returns the foreign commit
   * and the ref that keeps it, or null when all was well.
   */
  async guard(): Promise<{ foreign: string; quarantine: string } | null> {
    if (this.expected === null) return null;
    const head = await this.world.head(this.branch);
    if (head === this.expected) return null;
    const quarantine = `refs/genesis/quarantine/foreign-${new Date().toISOString().replace(/[-:.]/g, '')}-${head.slice(0, 12)}`;
    await this.world.setRef(quarantine, head);
    if (!(await this.world.compareAndSwap(`refs/heads/${this.branch}`, this.expected, head))) return this.guard();
    return { foreign: head, quarantine };
  }

  /** Moves the branch from `expected` to `commit` (and `alongside`, in the same transaction); usable for any verified change. */
  async swap(commit: string, expected: string, alongside: ReadonlyArray<{ ref: string; next: string }> = []): Promise<boolean> {
    if (!(await this.world.compareAndSwap(`refs/heads/${this.branch}`, commit, expected, alongside))) return false;
    this.expected = commit;
    return true;
  }

  /** Lands one change of the integration queue and records it. */
  async land(input: {
    change: QueuedChange;
    commit: string;
    expected: string;
    verifiedOn: string | null;
    generation: number;
    verificationId: string;
    startedAt: number;
  }): Promise<LandOutcome> {
    const record = await this.ledger.read(input.change.id);
    const proof = await this.proof(input, record);
    if (typeof proof === 'string') return { landed: false, moved: false, reason: 'unverified-result', message: proof };
    const fell = await this.scoreFell(input.expected, proof?.gate?.score ?? record!.gate?.score ?? null);
    if (fell) return { landed: false, moved: false, reason: 'score-fell', message: fell };
    await this.guard();
    const final = landedRecord(record!, input.commit, proof, Math.round(performance.now() - input.startedAt));
    if (this.world.hasListeners) {
      // A server (or a mirror) is told after the local move and may undo it: the record follows the move.
      // The record the gate left goes first, so what the move pushes carries it, as a worker's would be.
      await this.ledger.writeHeld(final.id);
      if (!(await this.swap(input.commit, input.expected))) return { landed: false, moved: true, head: await this.world.head(this.branch) };
      await this.ledger.write(final);
      return { landed: true, record: final };
    }
    // The branch and the record that names its new commit move in one ref transaction: a crash leaves both or neither.
    const recorded = await this.ledger.writeCommit(final);
    if (!(await this.swap(input.commit, input.expected, [{ ref: `${EPISODE_REF_PREFIX}${final.id}`, next: recorded }])))
      return { landed: false, moved: true, head: await this.world.head(this.branch) };
    // The record git now holds is final: the journal's (the episode's record until now, in process) goes.
    await this.ledger.settled(final.id);
    return { landed: true, record: final };
  }

  /**
   * Ratchet worlds: a change verified on a tip whose own verification was still running met a floor
   * older than the changes ahead of it. Landing is where the order is final, so the floor is
   * checked again here against the head it lands on.
   */
  private async scoreFell(head: string, score: number | null): Promise<string | null> {
    const manifest = await this.world.manifestAt(head);
    if (manifest.verify.mode !== 'ratchet') return null;
    const floor = await this.world.headScore(this.branch, head);
    if (score !== null && score >= floor) return null;
    return `${score ?? 'no'} tests pass, fewer than the ${floor} that pass on the accepted head it would land on`;
  }

  /** The verification behind the commit as the world holds it, or why there is none. */
  private async proof(
    input: { change: QueuedChange; commit: string; verifiedOn: string | null; verificationId: string },
    record: EpisodeRecord | null,
  ): Promise<VerificationRecord | null | string> {
    // A change handed to the queue by a gate that judged a place rebuilt under it has no passing gate of its own: the verification below is its gate.
    const handedOver = record?.handedOver === true && input.verifiedOn !== null;
    if (!record || record.candidate !== input.change.candidate || (record.gate?.ok !== true && !handedOver)) {
      return `no passing gate record of episode ${input.change.id} for candidate ${input.change.candidate.slice(0, 12)} in the ledger`;
    }
    if (input.verifiedOn === null) return null;
    const v = await this.verifications.read(input.verificationId);
    const tree = await this.world.treeOf(input.commit);
    if (!v?.ok || v.commit !== input.commit || v.tree !== tree || v.onto !== input.verifiedOn || v.gate?.ok !== true) {
      return `no passing verification record ${input.verificationId} for commit ${input.commit.slice(0, 12)} in the world`;
    }
    return v;
  }
}

/** The final record of a change that landed as `commit`. */
export function landedRecord(record: EpisodeRecord, commit: string, verification: VerificationRecord | null, integrateMs: number | null): EpisodeRecord {
  const phases = integrateMs === null ? record.phases : { ...record.phases, integrate: integrateMs };
  const base = { ...record, status: 'final' as const, outcome: 'accepted' as const, commit, phases, endedAt: new Date().toISOString() };
  if (!verification) return base;
  return {
    ...base,
    reason: 'replayed',
    message: `${record.handedOver ? 'verified' : 'verified again'} on ${verification.onto.slice(0, 12)} (the changes landed or queued ahead of it): ${verification.gate?.summary ?? ''}`,
    gate: verification.gate,
    verification: { id: verification.verificationId, onto: verification.onto, tree: verification.tree, gate: verification.gate! },
  };
}
