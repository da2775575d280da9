import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { planGate } from '../gate/plan.js';
import { runGate, type GateRunVerdict } from '../gate/gate.js';
import { isGenesisError } from '../errors/genesis-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldManifest } from '../manifest/schema.js';
import { short, violation, warning, type AuditFinding } from './audit-finding.js';
import type { AuditedCommit } from './read-history.js';
import { doneTasksOf } from '../world/history/done-tasks.js';

export interface ReverifyOptions {
  /** The world's directory (its git dir; holdout directories are resolved against it). */
  repo: string;
  /** The whole accepted history, newest first: what is done at a commit is read from it. */
  history: readonly AuditedCommit[];
  /** The commits to verify again (all of them, or a sample). */
  targets: readonly AuditedCommit[];
  manifests: ReadonlyMap<string, WorldManifest | string[]>;
  sandbox: Sandbox;
  /** Gates run at once. @default 1 */
  jobs?: number;
  /** Called after each commit, for a progress line. */
  onVerified?: (commit: AuditedCommit, ok: boolean) => void;
  /**
   * The image id that judged a commit (its trailer or ledger record), to judge it again in that
   * image; a commit without one, or a sandbox other than docker, runs in its manifest's image.
   */
  recordedImage?: (commit: AuditedCommit) => string | null;
}

/** What re-verification found, and the images (by id) it judged in. */
export interface ReverifyResult {
  findings: AuditFinding[];
  images: string[];
}

/**
 * Checks every target tree out afresh and runs, in a new sandbox work dir, what the gate runs for
 * a tree of that commit: its manifest's setup, build and test (in a ratchet world: at least the
 * score of the commit before it), the check of every task done at that commit, and the hidden
 * holdout tests when this machine has them. A failing step runs once more, so a flaky test is
 * told apart from a tree that does not pass (a warning, not a violation). Each commit is judged in
 * the image recorded for it when this host has that image; when it is gone, in the manifest's
 * image, with an `image-missing` warning. Work dirs live under the system's temp dir (TMPDIR: in a
 * container that starts gates through the host's socket, a directory shared at the same path): an
 * audit writes nothing into the world.
 */
export async function reverifyCommits(options: ReverifyOptions): Promise<ReverifyResult> {
  const position = new Map(options.history.map((c, i) => [c.commit, i]));
  const root = await mkdtemp(join(tmpdir(), 'genesis-audit-'));
  const findings: AuditFinding[] = [];
  const missingHoldouts = new Set<string>();
  const goneImages = new Map<string, AuditedCommit[]>();
  const usedImages = new Set<string>();
  const queue = [...options.targets];
  const verify = async (c: AuditedCommit, manifest: WorldManifest): Promise<GateRunVerdict> => {
    const at = position.get(c.commit) ?? 0;
    const older = options.history.slice(at);
    const holdout = manifest.verify.holdout;
    const holdoutDir = holdout ? (isAbsolute(holdout.dir) ? holdout.dir : join(options.repo, holdout.dir)) : null;
    const holdoutHere =
      holdoutDir !== null &&
      (await stat(holdoutDir).then(
        (s) => s.isDirectory(),
        () => false,
      ));
    if (holdoutDir && !holdoutHere) missingHoldouts.add(holdoutDir);
    const gate = (image?: string) =>
      runGate({
        repo: options.repo,
        tree: c.tree,
        steps: planGate(manifest, null, doneTasksOf(older)),
        manifest,
        sandbox: options.sandbox,
        workDir: join(root, short(c.commit)),
        flaky: { base: null, ownCheck: null },
        // An amendment may change the suite itself, so its score starts a new baseline (as genesis amend judged it).
        ratchet: manifest.verify.mode === 'ratchet' ? { minScore: c.amend ? 0 : (older.slice(1).find((o) => o.score !== null)?.score ?? 0) } : undefined,
        // Not on the first commit: genesis init never ran the hidden tests on the starting content, so they do not judge it here either.
        holdout: holdoutHere && c.parents.length > 0 && !c.adopted ? { dir: holdoutDir!, command: holdout!.command } : undefined,
        image,
      });
    const recorded = options.sandbox.kind === 'docker' ? (options.recordedImage?.(c) ?? null) : null;
    if (recorded) {
      try {
        return await gate(recorded);
      } catch (error) {
        if (!isGenesisError(error) || error.code !== 'sandbox-image-missing') throw error;
        goneImages.set(recorded, [...(goneImages.get(recorded) ?? []), c]);
      }
    }
    return gate();
  };
  const worker = async (): Promise<void> => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const manifest = c.manifestKey ? options.manifests.get(c.manifestKey) : undefined;
      if (manifest === undefined || Array.isArray(manifest)) continue; // reported as manifest-unreadable
      const verdict = await verify(c, manifest);
      if (verdict.record.image) usedImages.add(verdict.record.image.id);
      options.onVerified?.(c, verdict.ok);
      if (!verdict.ok) findings.push(failed(c, verdict));
      else if (verdict.record.flaky?.length) findings.push(flaky(c, verdict.record.flaky));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.jobs ?? 1) }, worker));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  for (const dir of missingHoldouts) {
    findings.push(
      warning('holdout-missing', `the hidden tests in ${dir} are not on this machine, so they were not run again`, {
        hint: 'audit where the holdout directory lives to run them too',
      }),
    );
  }
  for (const [image, commits] of goneImages) findings.push(imageGone(image, commits));
  // Workers finish in any order; report in history order.
  findings.sort((a, b) => (position.get(a.commit ?? '') ?? -1) - (position.get(b.commit ?? '') ?? -1));
  return { findings, images: [...usedImages] };
}

function imageGone(image: string, commits: readonly AuditedCommit[]): AuditFinding {
  const which =
    commits.length === 1
      ? `commit ${short(commits[0]!.commit)} was`
      : `${commits.length} commits (${commits
          .slice(0, 3)
          .map((c) => short(c.commit))
          .join(', ')}${commits.length > 3 ? ', …' : ''}) were`;
  return warning('image-missing', `${which} judged in image ${image}, which this host does not have: verified again in the manifest's verify.image instead`, {
    commit: commits[0]!.commit,
    hint: 'to judge in the very same image, load it here (`docker save <id>` where it exists, `docker load` here); an image rebuilt from the same files gets another id',
  });
}

function failed(c: AuditedCommit, verdict: Extract<GateRunVerdict, { ok: false }>): AuditFinding {
  return violation(
    'reverify-failed',
    `commit ${short(c.commit)}${c.task ? ` (task ${c.task})` : ''} fails its gate when verified again: ${verdict.reason}: ${verdict.message}`,
    {
      commit: c.commit,
      ...(c.episode ? { episode: c.episode } : {}),
      detail: verdict.log.slice(-1500),
      hint: 'a tree on the accepted branch must pass its tests; if the sandbox changed since (image, limits), check that first',
    },
  );
}

function flaky(c: AuditedCommit, steps: readonly string[]): AuditFinding {
  return warning('reverify-flaky', `commit ${short(c.commit)}: ${steps.join(', ')} failed once and passed when run again: a flaky test`, {
    commit: c.commit,
    hint: 'flaky tests let wrong changes through and reject right ones; make them deterministic',
  });
}
