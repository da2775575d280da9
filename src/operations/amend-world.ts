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

export interface AmendInput {
  /** The working tree that becomes the next accepted tree. */
  from: string;
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
  /** What the person may not have meant (a clone of an older head, which reverts what landed since). */
  warnings: string[];
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
 * The caller holds the run lock (no integrator is running) unless `dryRun`.
 */
export async function amendWorld(world: WorldRepo, input: AmendInput, sandboxFor: (m: WorldManifest) => Promise<Sandbox>): Promise<AmendResult> {
  const message = input.message.trim();
  if (!message)
    throw new GenesisError('amend-message-required', 'an amendment needs a --message saying what was changed and why', {
      hint: 'pass --message "…"; it becomes the commit message and the Genesis-Amend trailer',
    });
  const current = await world.manifestAt('HEAD');
  const head = await world.head(current.branch);
  const tree = await world.writeTreeFromDir(input.from, join(world.scratchDir, `amend-${process.pid}.index`));
  if (tree === (await world.treeOf(head))) {
    throw new GenesisError('amend-empty', `${input.from} is exactly the accepted head ${head.slice(0, 12)}: nothing to amend`, {
      hint: 'change the files first (genesis amend lands a working tree, not a diff)',
    });
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
  const result = { head, tree, commit: null, diff, verdict, tasks, warnings: await staleCloneWarnings(world, input.from, head) };
  if (!verdict.ok || input.dryRun) return result;
  const commit = await world.commitTree(tree, [head], amendMessage(message, input.by, verdict));
  if (!(await world.compareAndSwap(`refs/heads/${current.branch}`, commit, head))) {
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
 * The .git of --from is not read for the tree, but when it is a clone of an older accepted head,
 * landing its tree reverts whatever landed since: worth saying before the person relies on it.
 */
async function staleCloneWarnings(world: WorldRepo, from: string, head: string): Promise<string[]> {
  const cloned = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: from, okExitCodes: [1, 128] });
  const base = cloned.exitCode === 0 ? cloned.stdout.trim() : '';
  if (!/^[0-9a-f]{40}$/.test(base) || base === head) return [];
  const since = await git(['rev-list', '--count', '--first-parent', `${base}..${head}`], { cwd: world.path, okExitCodes: [128] });
  if (since.exitCode !== 0 || since.stdout.trim() === '0') return [];
  return [
    `${from} is a clone at ${base.slice(0, 12)}, ${since.stdout.trim()} accepted commit(s) behind the head ${head.slice(0, 12)}: its tree reverts what landed since unless you brought it in (git pull there first)`,
  ];
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
