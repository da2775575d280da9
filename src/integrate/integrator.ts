import type { EpisodeResult } from '../episode/episode-job.js';
import { verifyCandidate } from '../gate/verify-candidate.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { acceptedCommitMessage, readDoneTasks } from '../world/accepted-history.js';
import type { GateRecord } from '../world/episode-record.js';
import { mergeTrees } from '../world/merge-tree.js';
import type { WorldRepo } from '../world/world-repo.js';

export type IntegrationOutcome =
  | { outcome: 'accepted'; commit: string; replayed: boolean; gate: GateRecord | null }
  | { outcome: 'rejected'; reason: string; message: string; signature: string | null; gate: GateRecord | null; gateLog: string | null };

export interface IntegrationInput {
  result: EpisodeResult;
  title: string;
  agent: string;
  /** The gate summary from the worker, used when the head has not moved. */
  verified: string;
  /** Tests passing on the candidate (ratchet worlds), from the worker's gate. */
  score?: number | null;
}

const MAX_SWAP_TRIES = 3;

/**
 * The only writer of the accepted branch. A candidate whose base is still the head lands by a
 * compare-and-swap fast-forward; when the head has moved, the change is replayed on the new head,
 * verified again, and only then swapped in. A conflict rejects the episode.
 */
export class Integrator {
  /** The head this integrator last saw or wrote: while it runs, nobody else may move the branch. */
  private expected: string | null;

  constructor(
    private readonly world: WorldRepo,
    private readonly sandbox: Sandbox,
    private readonly branch: string,
    startHead: string | null = null,
  ) {
    this.expected = startHead;
  }

  /**
   * Puts the branch back if something other than this integrator moved it (an unsandboxed agent
   * writing the world's refs, a stray push): the foreign commit is kept under a quarantine ref,
   * never left on the accepted history. Returns the foreign commit and that ref, or null when all was well.
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

  async integrate(input: IntegrationInput): Promise<IntegrationOutcome> {
    const { result } = input;
    const ref = `refs/heads/${this.branch}`;
    for (let i = 0; i < MAX_SWAP_TRIES; i++) {
      await this.guard();
      const head = await this.world.head(this.branch);
      if (head === result.base) {
        const tree = await this.world.treeOf(result.candidate!);
        const commit = await this.world.commitTree(tree, [head], this.message(input, input.verified, input.score));
        if (await this.world.compareAndSwap(ref, commit, head)) {
          this.expected = commit;
          return { outcome: 'accepted', commit, replayed: false, gate: null };
        }
        continue;
      }
      const replay = await this.replay(input, head);
      if (replay.outcome === 'rejected') return replay;
      if (await this.world.compareAndSwap(ref, replay.commit, head)) {
        this.expected = replay.commit;
        return replay;
      }
    }
    return { outcome: 'rejected', reason: 'head-contention', message: `the accepted branch kept moving during ${MAX_SWAP_TRIES} tries`, signature: null, gate: null, gateLog: null };
  }

  private async replay(input: IntegrationInput, head: string): Promise<IntegrationOutcome & { commit: string } | Extract<IntegrationOutcome, { outcome: 'rejected' }>> {
    const { result } = input;
    const manifest = await this.world.manifestAt(head);
    const merged = await mergeTrees(this.world.path, head, result.candidate!, manifest.goal.progressFile);
    if (!merged.clean) {
      return { outcome: 'rejected', reason: 'replay-conflict', message: `the change conflicts with the accepted head in ${merged.conflicts.join(', ')}`, signature: `replay-conflict:${merged.conflicts.sort().join(',')}`, gate: null, gateLog: null };
    }
    const headTree = await this.world.treeOf(head);
    if (merged.tree === headTree) {
      return { outcome: 'rejected', reason: 'replay-empty', message: 'the accepted head already contains this change', signature: 'replay-empty', gate: null, gateLog: null };
    }
    const task = manifest.tasks.find((t) => t.id === result.task);
    if (!task) {
      return { outcome: 'rejected', reason: 'task-removed', message: `task ${result.task} is no longer in world.yaml`, signature: 'task-removed', gate: null, gateLog: null };
    }
    const done = await readDoneTasks(this.world.path, this.branch, head);
    const verdict = await verifyCandidate({
      world: this.world, sandbox: this.sandbox, head, headManifest: manifest, fromTree: headTree,
      candidateTree: merged.tree, task, doneTasks: done, name: `${result.episodeId}-replay`, baseTree: headTree,
    });
    if (!verdict.ok) {
      return { outcome: 'rejected', reason: `replay-${verdict.reason}`, message: `replayed on the new head: ${verdict.message}`, signature: verdict.signature, gate: verdict.gate, gateLog: verdict.log };
    }
    const commit = await this.world.commitTree(merged.tree, [head], this.message(input, `${verdict.gate.summary} (replayed on ${head.slice(0, 12)})`, verdict.gate.score));
    return { outcome: 'accepted', commit, replayed: true, gate: verdict.gate };
  }

  private message(input: IntegrationInput, verified: string, score: number | null | undefined): string {
    const { result } = input;
    return acceptedCommitMessage({ title: input.title, episode: result.episodeId, task: result.task, attempt: result.attempt, agent: input.agent, verified, score });
  }
}
