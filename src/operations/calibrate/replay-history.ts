import { join } from 'node:path';
import type { RejectionReason } from '../../errors/rejection-reasons.js';
import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import { overlayFiles } from '../../git/tree/overlay.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { LocalWorld } from '../../world/local-world.js';
import { PER_TEST_TIMEOUTS_NOTE } from '../../gate/timed-out-tests.js';
import { classifyRejection, type RejectionCause } from './rejection-cause.js';
import type { CalibrationGate } from './calibration-gate.js';

/** One commit of the project's history and its parent, as replayed. */
export interface HistoryCommit {
  commit: string;
  parent: string;
  subject: string;
}

export interface ReplayOutcome {
  commit: string;
  subject: string;
  accepted: boolean;
  reason?: RejectionReason;
  message?: string;
  cause?: RejectionCause;
  /** Steps that failed once and passed on the gate's own re-run, or the whole gate when it failed and then passed when gated again. */
  flaky?: string[];
  durationMs: number;
  logTail?: string;
}

export interface ReplayInput {
  scratch: LocalWorld;
  manifest: WorldManifest;
  /** world.yaml as the world holds it, laid over every replayed tree (the history had none, or an older one). */
  manifestText: string;
  /** Oldest first. */
  commits: readonly HistoryCommit[];
  /** Where each replay is gated (this process, or the world's workers). */
  gate: CalibrationGate;
  jobs: number;
  onReplayed?: (outcome: ReplayOutcome, done: number, of: number) => void;
}

/**
 * Replays the project's own commits through the gate: each commit's tree (with the world's
 * world.yaml laid over it) is the candidate, its parent's the accepted head, judged as an
 * episode's change would be (pre-gate rules, the parent's test baseline, flaky re-runs, the
 * parent for a broken base). The project made and kept each change, so each rejection is one the
 * gate would make of a right change: what f counts. Up to `jobs` at once; a commit's gate waits
 * for its parent's baseline instead of learning it again. A rejection that is not explained by
 * its log is gated once more, to tell a flaky test from a failing one: passing then, the commit
 * is accepted as flaky, apart from f.
 */
export async function replayHistory(input: ReplayInput): Promise<ReplayOutcome[]> {
  const { scratch } = input;
  const overlay = (tree: string, name: string) => overlayFiles(scratch.path, tree, { 'world.yaml': input.manifestText }, join(scratch.path, `${name}.index`));
  const prepared: Prepared[] = [];
  for (const [i, c] of input.commits.entries()) {
    const [fromTree, candidateTree] = [
      await overlay(await scratch.treeOf(c.parent), `base-${i}`),
      await overlay(await scratch.treeOf(c.commit), `candidate-${i}`),
    ];
    const head = await scratch.commitTree(fromTree, [], `replayed base of ${c.commit.slice(0, 12)}`);
    prepared.push({ c, i, fromTree, candidateTree, head });
  }
  const candidates = new Set(prepared.map((p) => p.candidateTree));
  const outcomes: ReplayOutcome[] = new Array(prepared.length);
  const queue = [...prepared];
  let done = 0;
  const gate = (p: Prepared, attempt: number): Promise<CandidateVerdict> =>
    input.gate({
      head: p.head,
      fromTree: p.fromTree,
      candidateTree: p.candidateTree,
      name: `replay-${p.c.commit.slice(0, 12)}-${attempt}`,
      // The parent's gate, when it is replayed too, stores the baseline this one compares with.
      ...(candidates.has(p.fromTree) && attempt === 1 ? { awaitHeadBaselineMs: input.manifest.verify.timeoutSec * 2000 } : {}),
    });
  const worker = async (): Promise<void> => {
    for (let p = queue.shift(); p; p = queue.shift()) {
      const started = Date.now();
      const outcome = await replayOne(
        p.c,
        p.fromTree === p.candidateTree,
        () => gate(p, 1),
        () => gate(p, 2),
        started,
      );
      outcomes[p.i] = outcome;
      done += 1;
      input.onReplayed?.(outcome, done, prepared.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.jobs) }, worker));
  return outcomes;
}

interface Prepared {
  c: HistoryCommit;
  i: number;
  fromTree: string;
  candidateTree: string;
  head: string;
}

async function replayOne(
  c: HistoryCommit,
  empty: boolean,
  first: () => Promise<CandidateVerdict>,
  again: () => Promise<CandidateVerdict>,
  started: number,
): Promise<ReplayOutcome> {
  if (empty) return { commit: c.commit, subject: c.subject, accepted: true, durationMs: 0 };
  const verdict = await first();
  if (verdict.ok) {
    const flaky = verdict.gate.flaky ?? [];
    return { commit: c.commit, subject: c.subject, accepted: true, ...(flaky.length ? { flaky } : {}), durationMs: Date.now() - started };
  }
  // The gate names the run again of a step that failed only by per-test timeouts (gate.ts): the record says so, whatever the log's length.
  const perTestTimeouts = (verdict.gate?.steps ?? []).some((s) => s.name.endsWith(PER_TEST_TIMEOUTS_NOTE));
  const facts = { reason: verdict.reason, message: verdict.message, log: verdict.log.slice(-4000), perTestTimeouts };
  const cause = classifyRejection(facts);
  if (cause === 'tests-fail' || cause === 'base-fails' || (cause === 'timeout' && perTestTimeouts)) {
    const second = await again();
    // The environment decided the first verdict (a loaded machine, a test's own clock), not the
    // change: a run would have retried it, so it is flaky, reported apart from f.
    if (second.ok)
      return { commit: c.commit, subject: c.subject, accepted: true, flaky: [`the whole gate (${verdict.reason} first)`], durationMs: Date.now() - started };
  }
  return {
    commit: c.commit,
    subject: c.subject,
    accepted: false,
    reason: verdict.reason,
    message: verdict.message,
    cause,
    durationMs: Date.now() - started,
    logTail: verdict.log.slice(-1500),
  };
}
