import { acceptedCommitMessage } from '../world/history/accepted-history.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { WorldRepo } from '../world/world-repo.js';
import type { QueuedChange } from './integration-queue.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

/** Where each change's latest speculative commit is kept while it waits to land. */
export const SPECULATIVE_REF_PREFIX = 'refs/genesis/speculative/';

export type BuiltTip =
  | { ok: true; commit: string; tree: string; needsGate: boolean }
  | { ok: false; reason: RejectionReason; message: string; signature: string };

/** The id of the verification behind a speculative commit: the episode's own gate, or a gate on the tip. */
export function verificationId(episode: string, generation: number, needsGate: boolean): string {
  return needsGate ? `${episode}-v${generation}` : episode;
}

/**
 * Builds a change's speculative commit on `onto` (the accepted head or the speculative commit
 * ahead of it) without a working tree: a three-way merge in the object store. The commit is made
 * now, with the trailers it will land with, so that once `onto` lands this very commit lands by
 * compare-and-swap. On its own base the merge is the candidate itself, which the episode's gate
 * already passed: no further gate is needed. A conflict, an empty result or a removed task
 * rejects the change here, without a gate. With `reserve`, the commit is built
 * for the change's own episode to gate before it joins: its trailers name that episode's gate.
 */
export async function buildTip(
  world: WorldRepo,
  change: QueuedChange,
  record: EpisodeRecord,
  onto: string,
  generation: number,
  options: { reserve?: boolean } = {},
): Promise<BuiltTip> {
  const manifest = await world.manifestAt(onto);
  const task = manifest.tasks.find((t) => t.id === change.task);
  if (!task) return { ok: false, reason: 'task-removed', message: `task ${change.task} is no longer in world.yaml`, signature: 'task-removed' };
  const onOwnBase = onto === change.base;
  const merged = onOwnBase
    ? { clean: true as const, tree: await world.treeOf(change.candidate) }
    : await world.mergeTrees(onto, change.source ?? change.candidate, manifest.goal.progressFile);
  if (!merged.clean) {
    const conflicts = [...merged.conflicts].sort();
    return {
      ok: false,
      reason: 'replay-conflict',
      message: `the change conflicts with the changes landed or queued ahead of it in ${conflicts.join(', ')}`,
      signature: `replay-conflict:${conflicts.join(',')}`,
    };
  }
  if (!onOwnBase && merged.tree === (await world.treeOf(onto))) {
    return {
      ok: false,
      reason: 'replay-empty',
      message: 'the accepted head (with the changes queued ahead) already contains this change',
      signature: 'replay-empty',
    };
  }
  // A change reserved before its own gate ran has no gated build yet, not even on its own base.
  const needsGate = options.reserve ? false : !onOwnBase || change.ungated === true;
  const verification = verificationId(change.id, generation, needsGate);
  // A change rebuilt while its own gate still runs has no summary yet, and one whose gate failed on a
  // place rebuilt under it (handed to the queue) has none that passed: say only what is known.
  const own = record.gate?.ok ? record.gate.summary : null;
  // The verdict on the tip is not known yet: the trailer names the verification, whose record holds it.
  const verified = options.reserve
    ? `gated by episode ${change.id} on ${onto.slice(0, 12)} (its record holds the verdict)`
    : needsGate
      ? `${own ? `${own}; verified again` : 'verified'} on ${onto.slice(0, 12)} by ${verification}${own ? '' : ' (its record holds the verdict)'}`
      : (own ?? 'passed');
  const message = acceptedCommitMessage({
    title: task.title,
    episode: change.id,
    task: change.task,
    attempt: record.attempt,
    agent: record.agent,
    verified,
    score: needsGate ? null : (record.gate?.score ?? null),
    // A change reserved before its record was written brings the cost its agent reported.
    costUsd: change.costUsd ?? record.usage?.costUsd ?? null,
    tree: merged.tree,
    verification,
  });
  const commit = await world.commitTree(merged.tree, [onto], message);
  // A ref, so workers that mirror the world (a git URL) fetch the commit they are to verify.
  if (needsGate || options.reserve) await world.setRef(`${SPECULATIVE_REF_PREFIX}${change.id}`, commit);
  return { ok: true, commit, tree: merged.tree, needsGate };
}
