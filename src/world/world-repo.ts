import type { ChangedEntry } from '../git/tree/diff.js';
import type { MergeResult } from '../git/merge-tree.js';
import type { RawCommit } from '../git/read-commits.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { AcceptedCommit } from './history/accepted-history.js';
import type { Adoption } from './history/adoption.js';
import type { Calibration } from './calibration.js';
import type { ReviewDecision } from './review-decisions.js';
import type { PendingSteering, SteeringAnswer, SteeringRequestInput } from './steering-requests.js';
import type { StoredTaskRetry } from './task-retries.js';
import type { SandboxChoice } from './world-settings.js';

/**
 * Told of every ref a WorldRepo moved by compare-and-swap: a world behind a git URL pushes the
 * move to its server (remote-world.ts), `publish:` mirrors the accepted branch (publisher.ts).
 */
export interface RefMoveListener {
  /**
   * Called after `ref` moved locally from `expected` to `next`. Resolves false when the move must
   * not stand (the server's ref had moved: the listener has put the local ref where the server's is).
   */
  moved(ref: string, next: string, expected: string | null): Promise<boolean>;
}

/**
 * The WorldRepo port: a world, that is a git repository whose branch (default `main`) is the
 * accepted history, with everything Genesis reads and writes of it.
 *
 * Contract:
 * - Everything durable lives in the repository's objects and refs, so `git clone --mirror` carries
 *   the world whole; `scratchDir` (workspaces, gate directories, indexes) is this machine's alone,
 *   ignored by git, and may be removed between runs.
 * - Reads never change the world. `acceptedHistory`, `doneTasks` and `headScore` read the first-parent
 *   history of a branch (at its head, or at `at`) and what Genesis's trailers say of each commit; a
 *   commit Genesis did not make has no task and no score.
 * - The only writes that move a ref are `compareAndSwap` (all of its refs or none, and only when
 *   `ref` still points at `expected`) and `setRef` (unconditional: records, not the accepted branch).
 *   Every listener added with `onRefMoved` is told of each successful swap, in order; a listener
 *   that answers false undoes the move and the swap reports false.
 * - Writing objects (`commitTree`, `writeCommit`, `writeTreeFromDir`, `overlayFiles`) moves no ref.
 * - `path` names the repository on this machine for the processes that must open it themselves
 *   (a clone for a workspace, a gate's export); code that only reads or writes the world uses the
 *   methods, not the path.
 */
export interface WorldRepo {
  /** The bare repository on this machine (a remote world's local mirror). */
  readonly path: string;
  /** This machine's scratch space for the world: `<path>/genesis/`. */
  readonly scratchDir: string;
  /** Whether something is told of ref moves (a git server to push to, mirrors to publish to). */
  readonly hasListeners: boolean;

  /** The commit a ref points at, or null when it does not exist. */
  resolveRef(ref: string): Promise<string | null>;
  /** The commit at the tip of `branch`; fails with `world-no-branch` when there is none. */
  head(branch: string): Promise<string>;
  /** A file's text at a commit, or null when the commit has no such file. */
  readFile(commit: string, path: string): Promise<string | null>;
  /** The manifest (world.yaml and its tasks files) at a commit; fails with `manifest-missing` or `invalid-manifest`. */
  manifestAt(commit: string): Promise<WorldManifest>;
  /** The tree of a commit. */
  treeOf(commit: string): Promise<string>;
  commitTree(tree: string, parents: string[], message: string): Promise<string>;
  /** Writes a commit object of exactly these fields (no ref moves). */
  writeCommit(input: { tree: string; parents: readonly string[]; message: string; now?: Date }): Promise<string>;
  /** Writes a directory's content as a tree, as `git add --all` would, through the index file `indexFile`. */
  writeTreeFromDir(dir: string, indexFile: string): Promise<string>;
  /** A tree like `tree` (or a commit's) with some files put in (text) or taken out (null), through the index file `indexFile`, which is gone afterwards. */
  overlayFiles(tree: string, files: Readonly<Record<string, string | null>>, indexFile: string): Promise<string>;
  /** Whether `commit` is `of` or one of its ancestors. */
  isAncestor(commit: string, of: string): Promise<boolean>;

  /** The accepted branch's first-parent history, newest first, with each commit's Genesis trailers. */
  acceptedHistory(branch: string, at?: string): Promise<AcceptedCommit[]>;
  /** The first-parent commits of `rev` (a commit or a range), newest first, as their objects hold them: no trailers read. */
  firstParentCommits(rev: string): Promise<RawCommit[]>;
  /** The accepted commits after `since` (exclusive), newest first. */
  acceptedSince(branch: string, since: string): Promise<AcceptedCommit[]>;
  /** The tasks whose change is on the accepted branch (at its head, or at `at`). */
  doneTasks(branch: string, at?: string): Promise<Set<string>>;
  /** The score a ratchet world's head (or `at`) was accepted with; 0 before the first scored change. */
  headScore(branch: string, at?: string): Promise<number>;
  /** The gate summary a verification record holds, or null when there is no such record. */
  verificationSummary(verificationId: string): Promise<string | null>;
  /** The score one accepted commit landed with, or null when it has none. */
  scoreOf(commit: { score?: number | null; verification?: string | null; episode?: string | null }): Promise<number | null>;

  /** The paths that differ between two trees. */
  changes(fromTree: string, toTree: string): Promise<ChangedEntry[]>;
  /** The patch between two trees, cut at `maxBytes`. */
  diffText(fromTree: string, toTree: string, maxBytes?: number): Promise<string>;
  /** A three-way merge of `candidate` onto `head` without a working tree. */
  mergeTrees(head: string, candidate: string, progressFile?: string): Promise<MergeResult>;

  /** People's decisions that blocked tasks deserve more attempts, oldest first. */
  taskRetries(): Promise<StoredTaskRetry[]>;
  writeTaskRetry(input: { task: string; note?: string | null; by?: string | null; now?: Date }): Promise<StoredTaskRetry>;
  /** The sandbox chosen at `genesis init --sandbox`, or null. */
  initSandbox(): Promise<SandboxChoice | null>;
  /** Remembers the sandbox chosen at `genesis init --sandbox` in this machine's copy. */
  writeInitSandbox(choice: SandboxChoice): Promise<void>;
  /** Where an adopted world's own history ends and Genesis's begins; null for a world made from scratch. */
  adoption(): Promise<Adoption | null>;
  /** The verifier's measured rates (`genesis calibrate`), or null before the first calibration. */
  calibration(): Promise<Calibration | null>;
  /** Records new rates over the old ones; returns what the world holds now. */
  writeCalibration(update: Calibration): Promise<Calibration>;

  /** People's decisions on changes held for review, by episode id. */
  reviewDecisions(): Promise<Map<string, ReviewDecision>>;
  /** Records a decision; null when the change already had one (a decision is never replaced). */
  writeReviewDecision(input: Omit<ReviewDecision, 'version' | 'at'> & { now?: Date }): Promise<ReviewDecision | null>;

  /** Leaves a steering request (amend, add a task, reopen) for the running scheduler. */
  writeSteeringRequest(input: SteeringRequestInput, now?: Date): Promise<PendingSteering>;
  /** The steering requests waiting, oldest first. */
  steeringRequests(): Promise<PendingSteering[]>;
  /** Takes a request away by compare-and-swap: false when the scheduler or its sender already did. */
  takeSteeringRequest(pending: Pick<PendingSteering, 'ref' | 'sha'>): Promise<boolean>;
  writeSteeringAnswer(answer: SteeringAnswer): Promise<void>;
  /** The scheduler's answer to a request, or null while there is none. */
  steeringAnswer(id: string): Promise<SteeringAnswer | null>;
  /** The sender read the answer: it goes. */
  removeSteeringAnswer(id: string): Promise<void>;

  /**
   * Moves `ref` from `expected` to `next` only if it still points at `expected` (null: only if it
   * does not exist yet), with the `alongside` refs in the same transaction. False when someone else
   * moved it first, or a listener refused the move.
   */
  compareAndSwap(ref: string, next: string, expected: string | null, alongside?: ReadonlyArray<{ ref: string; next: string }>): Promise<boolean>;
  /** Adds a listener told of every successful compareAndSwap, in the order added. */
  onRefMoved(listener: RefMoveListener): void;
  /** Points `ref` at `commit` whatever it pointed at (records; never the accepted branch). */
  setRef(ref: string, commit: string): Promise<void>;
}
