import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { GenesisError, isGenesisError } from '../errors/genesis-error.js';
import { planGate } from '../gate/plan.js';
import { runGate, type GateRunVerdict } from '../gate/gate.js';
import { saveBaseline, saveScoredNames } from '../gate/test-baseline.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { TRAILERS } from '../world/history/accepted-history.js';
import { formatCommitMessage, toOneLine } from '../world/commit-message.js';
import { git } from '../git/git.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { landByCompareAndSwap, type LandSteering } from './land-steering.js';

export interface AmendInput {
  /** The working tree that becomes the next accepted tree (its tree is written unless `tree` is given; named in messages). */
  from: string;
  /** The tree of `from`, already written into the world (a request to a running scheduler carries it). */
  tree?: string;
  /**
   * The accepted commit the amendment was made on (see amendmentBase); null or absent: the head.
   * When the head has moved past it, the amendment is merged three-way onto the head, so what
   * landed since stays; a conflict refuses it.
   */
  base?: string | null;
  /** Land the tree as it is even when it was made on an older head: undoes what landed since, on purpose. */
  force?: boolean;
  /** What the person changed and why: the commit's message, and its Genesis-Amend trailer. */
  message: string;
  /** Who amends, for the record (`alice@host`). */
  by: string;
  /** Verify and report, but do not move the branch. */
  dryRun?: boolean;
}

export interface AmendResult {
  head: string;
  tree: string;
  /** The landed commit; null on a dry run or when the gate rejected the tree. */
  commit: string | null;
  /** `git diff --stat` and the patch from the accepted head to the amended tree. */
  diff: string;
  verdict: GateRunVerdict;
  /** Tasks the amended manifest adds and removes, for the person to check. */
  tasks: { added: string[]; removed: string[] };
  /** What the person may not have meant, or should know (merged onto a newer head; --force undoing what landed). */
  warnings: string[];
  /** The commit the amendment was made on, when the head had moved past it, and whether it was merged onto the head. */
  stale: { base: string; behind: number; merged: boolean } | null;
}

/**
 * `genesis amend`: a person's change to anything in the world (code, protected tests, world.yaml),
 * verified like any change and landed by compare-and-swap with a Genesis-Amend trailer.
 *
 * Which rules judge it: the amended tree's own manifest, not the accepted head's. An amendment
 * exists to change the rules (fix a wrong acceptance test, a task's check, verify.test itself);
 * judged by the old rules, a person could never repair a broken test. It is also what every later
 * run and `genesis audit` judge that tree by, so the branch keeps the invariant that each commit
 * passes its own gate. What stays from history is which tasks are done: their checks (as the
 * amended manifest states them) must pass, while checks of tasks not yet done run only once done.
 * The caller holds the world (the run lock, or a running scheduler's lander passed as `land`) unless `dryRun`.
 */
export async function amendWorld(
  world: WorldRepo,
  input: AmendInput,
  sandboxFor: (m: WorldManifest) => Promise<Sandbox>,
  land?: LandSteering,
): Promise<AmendResult> {
  const message = input.message.trim();
  if (!message)
    throw new GenesisError('amend-message-required', 'an amendment needs a --message saying what was changed and why', {
      hint: 'pass --message "…"; it becomes the commit message and the Genesis-Amend trailer',
    });
  const current = await world.manifestAt('HEAD');
  const head = await world.head(current.branch);
  const written = input.tree ?? (await world.writeTreeFromDir(input.from, join(world.scratchDir, `amend-${process.pid}.index`)));
  const { tree, stale, warnings } = await ontoHead(world, current, head, written, input);
  if (tree === (await world.treeOf(head))) {
    throw new GenesisError(
      'amend-empty',
      stale?.merged
        ? `${input.from}, merged onto the accepted head ${head.slice(0, 12)}, changes nothing: what it changes has landed already`
        : `${input.from} is exactly the accepted head ${head.slice(0, 12)}: nothing to amend`,
      { hint: 'change the files first (genesis amend lands a working tree, not a diff)' },
    );
  }
  const amended = await readAmendedManifest(world, tree, input.from);
  if (amended.branch !== current.branch) {
    throw new GenesisError('amend-branch', `world.yaml in ${input.from} names branch "${amended.branch}", but the accepted branch is "${current.branch}"`, {
      hint: 'an amendment cannot move the accepted history to another branch; keep `branch:` as it is',
    });
  }
  const done = await world.doneTasks(current.branch, head);
  const diff = (await git(['diff', '--stat', '--patch', '--no-color', '--no-renames', head, tree, '--'], { cwd: world.path })).stdout;
  const verdict = await runGate({
    repo: world.path,
    tree,
    steps: planGate(amended, null, done),
    manifest: amended,
    sandbox: await sandboxFor(amended),
    workDir: join(world.scratchDir, 'gates', `amend-${process.pid}`),
    // A failing step runs once more, so a flaky test is named as such; there is no base to blame.
    flaky: { base: null, ownCheck: null },
    // A person may change the suite itself: the score the amended tree reaches is the one to beat next.
    ratchet: amended.verify.mode === 'ratchet' ? { minScore: 0 } : undefined,
    holdout: amended.verify.holdout ? { dir: await holdoutPath(world, amended.verify.holdout.dir), command: amended.verify.holdout.command } : undefined,
  });
  const ids = (m: WorldManifest) => new Set(m.tasks.map((t) => t.id));
  const tasks = { added: [...ids(amended)].filter((id) => !ids(current).has(id)), removed: [...ids(current)].filter((id) => !ids(amended).has(id)) };
  const result = { head, tree, commit: null, diff, verdict, tasks, warnings, stale };
  if (!verdict.ok || input.dryRun) return result;
  const commit = await world.commitTree(tree, [head], amendMessage(message, input.by, verdict));
  if (!(await (land ?? landByCompareAndSwap(world, current.branch))(commit, head))) {
    throw new GenesisError('head-moved', 'the accepted branch moved while the amendment was verified', {
      hint: 'run genesis amend again: it is verified again on the new head',
    });
  }
  // A person's amendment is what changes the tests a ratchet counts: those this run reported.
  if (amended.verify.mode === 'ratchet') await saveScoredNames(world.scratchDir, tree, verdict.testNames);
  // The next gates compare with what passed here instead of running this head's tests again.
  await saveBaseline(world.scratchDir, tree, verdict.passing);
  return { ...result, commit };
}

/**
 * The accepted commit a working tree was made on: the newest commit of its own first-parent
 * history (when it is a git clone, local commits on top allowed) that is in the accepted history
 * at `head`. Null when it is no clone of this world: the amendment is then taken as made on the
 * head the command read.
 */
export async function amendmentBase(world: WorldRepo, from: string, head: string): Promise<string | null> {
  const listed = await git(['rev-list', '--first-parent', '--max-count=200', 'HEAD'], { cwd: from, okExitCodes: [128] });
  if (listed.exitCode !== 0) return null;
  for (const commit of listed.stdout.split('\n').filter((line) => /^[0-9a-f]{40}$/.test(line))) {
    if (commit === head) return head;
    if (await world.isAncestor(commit, head)) return commit;
  }
  return null;
}

/**
 * Puts an amendment made on an older accepted commit onto the head: merged three-way (base: the
 * commit it was made on), so it changes what the person changed and keeps what landed since.
 * Landing its tree as it is would silently undo those commits; that takes --force.
 */
async function ontoHead(
  world: WorldRepo,
  current: WorldManifest,
  head: string,
  tree: string,
  input: AmendInput,
): Promise<{ tree: string; stale: AmendResult['stale']; warnings: string[] }> {
  const base = input.base ?? head;
  if (base === head) return { tree, stale: null, warnings: [] };
  const counted = await git(['rev-list', '--count', '--first-parent', `${base}..${head}`], { cwd: world.path, okExitCodes: [128] });
  const behind = counted.exitCode === 0 ? Number(counted.stdout.trim()) : 0;
  const at = `${input.from} was made on ${base.slice(0, 12)}, ${behind} accepted commit(s) behind the head ${head.slice(0, 12)}`;
  if (input.force) {
    return { tree, stale: { base, behind, merged: false }, warnings: [`${at}: --force lands its tree as it is, undoing what landed since where it differs`] };
  }
  const made = await world.commitTree(tree, [base], `amendment by ${toOneLine(input.by)}, as made on ${base.slice(0, 12)}\n`);
  const merged = await world.mergeTrees(head, made, current.goal.progressFile);
  if (!merged.clean) {
    throw new GenesisError('amend-conflict', `${at}, and it conflicts with what landed since in ${merged.conflicts.join(', ')}`, {
      hint: `bring ${input.from} up to date (git pull there), resolve the conflicts and amend again; or pass --force to land its tree as it is, undoing what landed since`,
    });
  }
  return { tree: merged.tree, stale: { base, behind, merged: true }, warnings: [`${at}: merged three-way onto the head, keeping what landed since`] };
}

async function readAmendedManifest(world: WorldRepo, tree: string, from: string): Promise<WorldManifest> {
  try {
    return await world.manifestAt(tree);
  } catch (error) {
    if (!isGenesisError(error)) throw error;
    throw new GenesisError('amend-invalid-manifest', `world.yaml in ${from} is not a valid manifest:\n${error.message}`, {
      hint: error.hint ?? 'fix world.yaml (genesis init prints the same checks)',
      cause: error,
    });
  }
}

async function holdoutPath(world: WorldRepo, dir: string): Promise<string> {
  const path = isAbsolute(dir) ? dir : join(world.path, dir);
  if (
    !(await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new GenesisError('holdout-missing', `the holdout directory ${path} does not exist on this machine`, {
      hint: 'amend where the hidden tests live, or fix verify.holdout.dir in the amended world.yaml',
    });
  }
  return path;
}

/** The person's message first, then the trailers `git log` and the audit read. */
export function amendMessage(message: string, by: string, verdict: Extract<GateRunVerdict, { ok: true }>): string {
  const [subject = '', ...body] = message.replace(/\r\n?/g, '\n').split('\n');
  const score = verdict.record.score === null || verdict.record.score === undefined ? [] : [[TRAILERS.score, String(verdict.record.score)] as const];
  return formatCommitMessage(subject, body.join('\n'), [
    [TRAILERS.amend, `${toOneLine(by)}: ${toOneLine(subject)}`],
    [TRAILERS.verified, verdict.record.summary],
    ...score,
  ]);
}
