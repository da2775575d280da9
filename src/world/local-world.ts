import { hasSeparator } from './commit-message.js';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { GenesisError } from '../errors/genesis-error.js';
import { git, gitValue } from '../git/git.js';
import { readManifest } from '../manifest/parse.js';
import { readText, resolveObject } from '../git/object-reader.js';
import { writeCommit } from '../git/object-writer.js';
import { updateRefs } from '../git/ref-updates.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { RefMoveListener, WorldRepo } from './world-repo.js';
import {
  type AcceptedCommit,
  learnWrittenCommit,
  readAcceptedHistory,
  readAcceptedSince,
  readDoneTasks,
  readHeadScore,
  scoreOf,
} from './history/accepted-history.js';
import { listChanges, diffText, type ChangedEntry } from '../git/tree/diff.js';
import { mergeTrees, type MergeResult } from '../git/merge-tree.js';
import { writeTreeFromDir } from '../git/tree/from-dir.js';
import { readFirstParentCommits, type RawCommit } from '../git/read-commits.js';
import { overlayFiles } from '../git/tree/overlay.js';
import { readTaskRetries, writeTaskRetry, type StoredTaskRetry } from './task-retries.js';
import { readInitSandbox, writeInitSandbox, type SandboxChoice } from './world-settings.js';
import { type Adoption, readAdoption } from './history/adoption.js';
import { readVerificationSummary } from './history/verification-ref.js';
import { type Calibration, readCalibration, writeCalibration } from './calibration.js';
import { readReviewDecisions, type ReviewDecision, writeReviewDecision } from './review-decisions.js';
import {
  listSteeringRequests,
  type PendingSteering,
  readSteeringAnswer,
  removeSteeringAnswer,
  type SteeringAnswer,
  type SteeringRequestInput,
  takeSteeringRequest,
  writeSteeringAnswer,
  writeSteeringRequest,
} from './steering-requests.js';

const manifestCache = new Map<string, WorldManifest>();

/** The world as a bare repository on this machine's disk (a git URL's world is its local mirror). */
export class LocalWorld implements WorldRepo {
  readonly path: string;
  private readonly listeners: RefMoveListener[] = [];

  private constructor(path: string) {
    this.path = path;
  }

  /** Opens an existing world; says how to create one when the path is not a world. */
  static async open(path: string): Promise<LocalWorld> {
    const abs = resolve(path);
    const isDir = await stat(abs).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      throw new GenesisError('world-not-found', `no world at ${abs}`, {
        hint: `create one with: genesis init --world ${path} --from <directory with world.yaml>`,
      });
    }
    const bare = await git(['rev-parse', '--is-bare-repository'], { cwd: abs, okExitCodes: [128] });
    if (bare.exitCode !== 0 || bare.stdout.trim() !== 'true') {
      throw new GenesisError('world-not-a-repo', `${abs} is not a world (a bare git repository made by genesis init)`, {
        hint: `create one with: genesis init --world <new dir> --from ${path}`,
      });
    }
    return new LocalWorld(abs);
  }

  /** Wraps a path already known to be a bare repository (used by init). */
  static at(path: string): LocalWorld {
    return new LocalWorld(resolve(path));
  }

  acceptedHistory(branch: string, at?: string): Promise<AcceptedCommit[]> {
    return readAcceptedHistory(this.path, branch, at);
  }

  firstParentCommits(rev: string): Promise<RawCommit[]> {
    return readFirstParentCommits(this.path, rev);
  }

  acceptedSince(branch: string, since: string): Promise<AcceptedCommit[]> {
    return readAcceptedSince(this.path, branch, since);
  }

  doneTasks(branch: string, at?: string): Promise<Set<string>> {
    return readDoneTasks(this.path, branch, at);
  }

  headScore(branch: string, at?: string): Promise<number> {
    return readHeadScore(this.path, branch, at);
  }

  scoreOf(commit: { score?: number | null; verification?: string | null; episode?: string | null }): Promise<number | null> {
    return scoreOf(this.path, commit);
  }

  verificationSummary(verificationId: string): Promise<string | null> {
    return readVerificationSummary(this.path, verificationId);
  }

  changes(fromTree: string, toTree: string): Promise<ChangedEntry[]> {
    return listChanges(this.path, fromTree, toTree);
  }

  diffText(fromTree: string, toTree: string, maxBytes?: number): Promise<string> {
    return diffText(this.path, fromTree, toTree, maxBytes);
  }

  mergeTrees(head: string, candidate: string, progressFile?: string): Promise<MergeResult> {
    return mergeTrees(this.path, head, candidate, progressFile);
  }

  async writeCommit(input: { tree: string; parents: readonly string[]; message: string; now?: Date }): Promise<string> {
    const commit = await writeCommit(this.path, input);
    await this.learn(commit, input.parents, input.message);
    return commit;
  }

  // The history index learns what Genesis wrote from Genesis: when the commit lands, the scheduler's
  // next question about it (the tasks done there) asks git nothing. The date is not indexed.
  private learn(commit: string, parents: readonly string[], message: string): Promise<void> {
    return learnWrittenCommit(this.path, { commit, parents: [...parents], date: '', message });
  }

  writeTreeFromDir(dir: string, indexFile: string): Promise<string> {
    return writeTreeFromDir(this.path, dir, indexFile);
  }

  overlayFiles(tree: string, files: Readonly<Record<string, string | null>>, indexFile: string): Promise<string> {
    return overlayFiles(this.path, tree, files, indexFile);
  }

  async isAncestor(commit: string, of: string): Promise<boolean> {
    // Exit 1 says "not an ancestor", 128 that one of them is not a commit here: neither is one.
    return (await git(['merge-base', '--is-ancestor', commit, of], { cwd: this.path, okExitCodes: [1, 128] })).exitCode === 0;
  }

  taskRetries(): Promise<StoredTaskRetry[]> {
    return readTaskRetries(this.path);
  }

  writeTaskRetry(input: { task: string; note?: string | null; by?: string | null; now?: Date }): Promise<StoredTaskRetry> {
    return writeTaskRetry(this.path, input);
  }

  initSandbox(): Promise<SandboxChoice | null> {
    return readInitSandbox(this.path);
  }

  writeInitSandbox(choice: SandboxChoice): Promise<void> {
    return writeInitSandbox(this.path, choice);
  }

  adoption(): Promise<Adoption | null> {
    return readAdoption(this.path);
  }

  calibration(): Promise<Calibration | null> {
    return readCalibration(this.path);
  }

  writeCalibration(update: Calibration): Promise<Calibration> {
    return writeCalibration(this.path, update);
  }

  reviewDecisions(): Promise<Map<string, ReviewDecision>> {
    return readReviewDecisions(this.path);
  }

  writeReviewDecision(input: Omit<ReviewDecision, 'version' | 'at'> & { now?: Date }): Promise<ReviewDecision | null> {
    return writeReviewDecision(this.path, input);
  }

  writeSteeringRequest(input: SteeringRequestInput, now?: Date): Promise<PendingSteering> {
    return writeSteeringRequest(this.path, input, now);
  }

  steeringRequests(): Promise<PendingSteering[]> {
    return listSteeringRequests(this.path);
  }

  takeSteeringRequest(pending: Pick<PendingSteering, 'ref' | 'sha'>): Promise<boolean> {
    return takeSteeringRequest(this.path, pending);
  }

  writeSteeringAnswer(answer: SteeringAnswer): Promise<void> {
    return writeSteeringAnswer(this.path, answer);
  }

  steeringAnswer(id: string): Promise<SteeringAnswer | null> {
    return readSteeringAnswer(this.path, id);
  }

  removeSteeringAnswer(id: string): Promise<void> {
    return removeSteeringAnswer(this.path, id);
  }

  get scratchDir(): string {
    return join(this.path, 'genesis');
  }

  /** The commit a ref points at, or null when it does not exist. */
  async resolveRef(ref: string): Promise<string | null> {
    // Through the world's long-lived cat-file (object-reader.ts): no process per lookup.
    return (await resolveObject(this.path, `${ref}^{commit}`))?.sha ?? null;
  }

  async head(branch: string): Promise<string> {
    const commit = await this.resolveRef(`refs/heads/${branch}`);
    if (!commit) {
      throw new GenesisError('world-no-branch', `the world has no branch "${branch}"`, {
        hint: 'check `branch:` in world.yaml, or re-create the world with genesis init',
      });
    }
    return commit;
  }

  /** A file's text at a commit, or null when the commit has no such file. */
  async readFile(commit: string, path: string): Promise<string | null> {
    return readText(this.path, `${commit}:${path}`);
  }

  async manifestAt(commit: string): Promise<WorldManifest> {
    // Parsing is costly for big task lists and happens several times per episode; the same
    // world.yaml blob (with the same `tasks/` tree, where a tasksDir lives) gives the same manifest.
    const [blob = '', tasksTree = ''] = await Promise.all(
      [`${commit}:world.yaml`, `${commit}:tasks`].map(async (name) => (await resolveObject(this.path, name))?.sha ?? ''),
    );
    const key = blob ? `${this.path}\0${blob}\0${tasksTree}` : null;
    const known = key ? manifestCache.get(key) : undefined;
    if (known) return known;
    const manifest = await this.parseManifestAt(commit);
    const cacheable = !manifest.tasksDir || manifest.tasksDir.replace(/\/+$/, '') === 'tasks';
    if (key && cacheable) {
      if (manifestCache.size >= 500) manifestCache.delete(manifestCache.keys().next().value!);
      manifestCache.set(key, manifest);
    }
    return manifest;
  }

  private async parseManifestAt(commit: string): Promise<WorldManifest> {
    const text = await this.readFile(commit, 'world.yaml');
    if (text === null) {
      throw new GenesisError('manifest-missing', `commit ${commit.slice(0, 12)} has no world.yaml`, {
        hint: 'a world keeps its manifest at the repository root',
      });
    }
    return readManifest(text, `world.yaml at ${commit.slice(0, 12)}`, await this.readTaskFiles(commit, text));
  }

  /** The YAML files of the manifest's tasksDir at a commit (or tree), if it names one. */
  private async readTaskFiles(commit: string, manifestText: string): Promise<Array<{ path: string; text: string }>> {
    let dir: unknown;
    try {
      dir = (parseYaml(manifestText) as { tasksDir?: unknown } | null)?.tasksDir;
    } catch {
      return []; // readManifest reports the YAML error itself
    }
    if (typeof dir !== 'string' || dir.trim() === '') return [];
    dir = dir.trim().replace(/\/+$/, '');
    const listed = await git(['ls-tree', '-r', '--name-only', commit, '--', `${dir}/`], { cwd: this.path });
    const paths = listed.stdout.split('\n').filter((p) => /\.ya?ml$/.test(p));
    return Promise.all(paths.map(async (path) => ({ path, text: (await this.readFile(commit, path)) ?? '' })));
  }

  async treeOf(commit: string): Promise<string> {
    const tree = await resolveObject(this.path, `${commit}^{tree}`);
    if (!tree) throw new GenesisError('git-failed', `${commit.slice(0, 40)} names no tree in the world`, { hint: 'check that the commit exists in the world' });
    return tree.sha;
  }

  async commitTree(tree: string, parents: string[], message: string): Promise<string> {
    // Readers split a message into subject, body and trailers: a control character in it is a bug upstream, never written.
    if (hasSeparator(message))
      throw new GenesisError('commit-message-invalid', `a commit message holds a control character: ${JSON.stringify(message.slice(0, 200))}`, {
        hint: 'build accepted messages with formatCommitMessage (world/commit-message.ts), which makes agent text one line',
      });
    // Written directly (object-writer.ts) once the tree and parents are known to be there, as commit-tree checks.
    const named = await Promise.all([tree, ...parents].map((name) => resolveObject(this.path, name)));
    const [treeObj, ...parentObjs] = named;
    if (treeObj?.type === 'tree' && parentObjs.every((p) => p?.type === 'commit')) {
      const shas = parentObjs.map((p) => p!.sha);
      const commit = await writeCommit(this.path, { tree: treeObj.sha, parents: shas, message });
      await this.learn(commit, shas, message);
      return commit;
    }
    const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])];
    return gitValue(args, { cwd: this.path, input: message });
  }

  /**
   * Moves `ref` from `expected` to `next` only if it still points at `expected` (null: only if it
   * does not exist yet). Returns false when someone else moved it first.
   */
  async compareAndSwap(ref: string, next: string, expected: string | null, alongside: ReadonlyArray<{ ref: string; next: string }> = []): Promise<boolean> {
    if (!(await this.swapRefs(ref, next, expected, alongside))) return false;
    for (const listener of this.listeners) {
      if (!(await listener.moved(ref, next, expected))) return false;
    }
    return true;
  }

  /** Whether something is told of ref moves (a git server to push to, mirrors to publish to). */
  get hasListeners(): boolean {
    return this.listeners.length > 0;
  }

  /** The swap itself, and the refs that move with it in the same transaction (all or none). */
  private async swapRefs(ref: string, next: string, expected: string | null, alongside: ReadonlyArray<{ ref: string; next: string }>): Promise<boolean> {
    const oid = /^[0-9a-f]{40}$/;
    const plain =
      [ref, ...alongside.map((a) => a.ref)].every((r) => r.startsWith('refs/')) &&
      [next, expected ?? next, ...alongside.map((a) => a.next)].every((c) => oid.test(c));
    if (plain) return (await updateRefs(this.path, [{ ref, next, expected }, ...alongside])).ok;
    const r = await git(['update-ref', ref, next, expected ?? '0'.repeat(40)], { cwd: this.path, okExitCodes: [1, 128] });
    if (r.exitCode !== 0) return false;
    for (const a of alongside) await this.setRef(a.ref, a.next);
    return true;
  }

  /** Adds a listener told of every successful compareAndSwap, in the order added. */
  onRefMoved(listener: RefMoveListener): void {
    this.listeners.push(listener);
  }

  async setRef(ref: string, commit: string): Promise<void> {
    if (ref.startsWith('refs/') && /^[0-9a-f]{40}$/.test(commit)) {
      const moved = await updateRefs(this.path, [{ ref, next: commit }]);
      if (!moved.ok)
        throw new GenesisError('git-failed', `could not set ${ref}: ${moved.error}`, {
          hint: 'check that the world path is a git repository you can write to',
        });
      return;
    }
    await git(['update-ref', ref, commit], { cwd: this.path });
  }
}
