import type { BudgetLift } from './budget-lifts.js';
import type { EpisodeArtifacts, EpisodeRecord } from './episode-record.js';
import type { EpisodeSummary } from './summary.js';

/**
 * The Ledger port: the durable record of every episode, accepted or not. In git (git-ledger.ts),
 * one ref per episode, each pointing at a commit whose tree holds `record.json` and the episode's logs. One ref per episode means no global lock and no lost update between
 * parallel episodes; a `git clone --mirror` carries the whole ledger. The record commit's parent
 * is the candidate commit, which keeps a rejected change reachable as evidence.
 *
 * An episode run in the process that started it is kept in the journal (journal.ts) until
 * its record is written once, final: `open` and `hold` write the journal, `write` (and the
 * lander's transaction, then `settled`) the git record. Reads see both: a journal entry stands for
 * the episode until git holds its final record.
 */
export interface Ledger {
  /** Records the start of an episode this process runs: in the journal, not in git (no object, no ref). */
  open(record: EpisodeRecord): Promise<void>;

  /**
   * Keeps an episode's record and logs as its gate left them, for the one git write that ends it:
   * in the journal, scrubbed as a git write would be. For an episode whose result stays in this
   * process; a result handed to another process must be proven by `write`.
   */
  hold(record: EpisodeRecord, artifacts?: EpisodeArtifacts): Promise<void>;

  /** After a transaction that moved this episode's ref to a commit from writeCommit: its journal entry goes. */
  settled(id: string): Promise<void>;

  /** Ids of the episodes the journal holds (open in a run of this machine, not yet written to git). */
  journaled(): Promise<Set<string>>;

  /** Writes every journal entry to git as it stands, with its logs, and empties the journal. */
  writeJournal(): Promise<void>;

  /** Writes the journal's entry of one episode to git as it stands (if git holds no final record of it) and drops it. */
  writeHeld(id: string): Promise<void>;

  /**
   * Drops journal entries git already holds final (a crash between a git write and the drop) and
   * temporary files of a write cut short. Only when no run of this world is going on (at a run's start).
   */
  tidyJournal(): Promise<void>;

  /**
   * Stores the record and its logs, scrubbed of secrets (secret-scrubber.ts): this is the one
   * place where records and logs are written, so nothing stored skips the scrubber. No git process:
   * the objects are written into the store directly (object-writer.ts) and the ref moves through
   * the world's long-lived `update-ref --stdin` (ref-updates.ts).
   */
  write(record: EpisodeRecord, artifacts?: EpisodeArtifacts): Promise<void>;

  /**
   * The commit a write of this record would point its ref at, with every object it needs stored,
   * but no ref moved: for a caller that moves the ref in one transaction with another (the lander
   * moves the branch and records the landing at once; then `settled`). Keeps the logs an earlier
   * write stored or the journal holds.
   */
  writeCommit(record: EpisodeRecord, artifacts?: EpisodeArtifacts): Promise<string>;

  /** Every record, oldest first (episode ids sort by start time), the journal's included. Two git processes in all. */
  readAll(): Promise<EpisodeRecord[]>;

  /**
   * What readAll says, summarized (summary.ts), oldest first: through the summary index, which
   * reads from git only the records whose ref moved since it last looked.
   */
  readSummaries(): Promise<EpisodeSummary[]>;

  /** The episode's record: the journal's while it holds the episode and git has no final record of it. */
  read(id: string): Promise<EpisodeRecord | null>;

  /** The record as git holds it, journal aside. */
  readCommitted(id: string): Promise<EpisodeRecord | null>;

  readArtifacts(id: string): Promise<EpisodeArtifacts>;

  /** The budget lifts people recorded (`genesis budget lift`), oldest first. */
  budgetLifts(): Promise<BudgetLift[]>;

  /** Records a lift; fails with `invalid-option` without a reason or a positive amount. */
  addBudgetLift(lift: Omit<BudgetLift, 'at'>, now?: Date): Promise<BudgetLift>;
}
