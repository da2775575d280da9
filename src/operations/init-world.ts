import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { missingDepsFilesError, readDepsFiles } from '../deps/read-deps-files.js';
import { GenesisError } from '../errors/genesis-error.js';
import { planGate } from '../gate/plan.js';
import { runGate, type GateRunVerdict } from '../gate/gate.js';
import { saveBaseline, saveScoredNames } from '../gate/test-baseline.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { TRAILERS } from '../world/history/accepted-history.js';
import { formatCommitMessage } from '../world/commit-message.js';
import { git, gitValue } from '../git/git.js';
import { findClosedTasks } from '../manifest/closed-tasks.js';
import { parseManifest, readManifest } from '../manifest/parse.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { LocalWorld } from '../world/local-world.js';
import { missingProgram, missingProgramError } from './missing-program.js';

export interface InitWorldResult {
  world: WorldRepo;
  manifest: WorldManifest;
  /** What the manifest allows but a person may not have meant (overlapping task paths, …). */
  warnings: string[];
  commit: string;
  gate: GateRunVerdict;
}

/**
 * Creates a world from a directory: a bare repository whose first accepted commit is the
 * directory's content, verified by the gate before the branch exists. On any failure nothing is
 * left behind.
 */
export async function initWorld(opts: {
  worldPath: string;
  from: string;
  sandbox: (m: WorldManifest) => Promise<Sandbox>;
  /** Told what init waits on (a sentence: the gate of the first commit, a dependency set's install), and null when it ends. */
  onWait?: (what: string | null) => void;
}): Promise<InitWorldResult> {
  const from = resolve(opts.from);
  if (!(await stat(from).catch(() => null))?.isDirectory()) {
    throw new GenesisError('world-source-missing', `${from} does not exist or is not a directory`, {
      hint: 'point --from at the directory that holds your world.yaml and starting files (check the spelling, or create it first; worlds/calc is an example)',
    });
  }
  const manifestText = await readFile(join(from, 'world.yaml'), 'utf8').catch(() => {
    throw new GenesisError('manifest-missing', `${from} has no world.yaml`, {
      hint: 'point --from at a directory with a world.yaml (see worlds/calc for an example)',
    });
  });
  const manifest = readManifest(manifestText, join(from, 'world.yaml'));
  const { warnings } = parseManifest(manifestText);
  await checkStartingContent(from, manifest);
  const path = resolve(opts.worldPath);
  await refuseExisting(path);
  const sandbox = await opts.sandbox(manifest);
  await sandbox.check();
  try {
    await git(['init', '--bare', `--initial-branch=${manifest.branch}`, path], { cwd: from });
    const world = LocalWorld.at(path);
    const env = { GIT_INDEX_FILE: join(path, 'genesis-init.index') };
    const ctx = ['--git-dir', path, '--work-tree', from];
    await git([...ctx, 'add', '--all', '--', '.'], { cwd: from, env });
    const tree = await gitValue([...ctx, 'write-tree'], { cwd: from, env });
    await rm(env.GIT_INDEX_FILE, { force: true });
    await refuseIgnoredManifest(from, path, tree, manifest);
    await checkDepsFilesExist(path, tree, manifest);
    // A ratchet world starts wherever its suite stands: the first commit sets the score to beat.
    const ratchet = manifest.verify.mode === 'ratchet' ? { minScore: 0 } : undefined;
    // The first gate installs the dependency set and runs every step: the longest wait of init.
    const gateWait = `the gate of the first commit (verify's steps in the ${sandbox.kind} sandbox)`;
    opts.onWait?.(gateWait);
    const gate = await runGate({
      repo: path,
      tree,
      steps: planGate(manifest, null, new Set()),
      manifest,
      sandbox,
      workDir: join(world.scratchDir, 'gates', 'init'),
      ratchet,
      onWait: (what) => opts.onWait?.(what ?? gateWait),
    }).finally(() => opts.onWait?.(null));
    if (!gate.ok) {
      const missing = missingProgram(gate.record, gate.log);
      if (missing) throw missingProgramError(missing, gate.record);
      throw new GenesisError('initial-commit-failed', `the world's first commit does not pass its own gate: ${gate.message}\n${gate.log.slice(-2000)}`, {
        hint: 'verify.test must pass on the starting content (task checks only run once their task is done)',
      });
    }
    const score = gate.record.score === undefined || gate.record.score === null ? [] : [[TRAILERS.score, String(gate.record.score)] as const];
    const message = formatCommitMessage(`world ${manifest.name}: initial content`, '', [[TRAILERS.verified, gate.record.summary], ...score]);
    const commit = await world.commitTree(tree, [], message);
    await world.compareAndSwap(`refs/heads/${manifest.branch}`, commit, null);
    // The first gates compare with what passed here (tests-vanished) without running it again.
    await saveBaseline(world.scratchDir, tree, gate.passing);
    // A ratchet counts the tests its first commit reported, from here until a person amends the world.
    if (ratchet) await saveScoredNames(world.scratchDir, tree, gate.testNames);
    return { world, manifest, commit, gate, warnings };
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    throw error;
  }
}

/** What a manifest names that only the starting content can answer: tasks that can change something, the script agent's recording. */
async function checkStartingContent(from: string, manifest: WorldManifest): Promise<void> {
  const closed = findClosedTasks(manifest);
  if (closed.length > 0) {
    const list = closed.map((t) => `"${t.id}" (paths: ${t.paths.join(', ')})`).join(', ');
    throw new GenesisError(
      'task-paths-protected',
      `task${closed.length === 1 ? '' : 's'} ${list} may change nothing: protected covers every path of ${closed.length === 1 ? 'it' : 'them'}, so each of its changes would be rejected at the gate`,
      {
        hint: 'give the task a path outside protected: (its source files, not its acceptance test), or narrow protected: in world.yaml',
      },
    );
  }
  const scripts = [manifest.agent, ...manifest.agent.rotation].filter((a) => a.kind === 'script' && a.script).map((a) => a.script!);
  for (const script of scripts) {
    if (!(await stat(join(from, script)).catch(() => null))?.isFile()) {
      throw new GenesisError('recording-not-found', `agent.script names ${script}, which ${from} does not have`, {
        hint: `add the recording at ${join(from, script)} (a path inside the world, listed under protected:), or fix agent.script in world.yaml`,
      });
    }
  }
}

/**
 * `git add --all` leaves out what the starting content's .gitignore ignores; a world.yaml (or a
 * task file of tasksDir) left out that way would give a world every command refuses as having no
 * manifest, while init itself read the file from disk and reported it verified.
 */
async function refuseIgnoredManifest(from: string, repo: string, tree: string, manifest: WorldManifest): Promise<void> {
  const wanted = ['world.yaml', ...(manifest.tasksDir ? await taskFilesOnDisk(from, manifest.tasksDir) : [])];
  const listed = await git(['--git-dir', repo, 'ls-tree', '-r', '--name-only', tree, '--', ...wanted], { cwd: from });
  const present = new Set(listed.stdout.split('\n').filter(Boolean));
  const left = wanted.filter((f) => !present.has(f));
  if (left.length === 0) return;
  const why = await git(['--git-dir', repo, '--work-tree', from, 'check-ignore', '--no-index', '-v', '--', ...left], { cwd: from, okExitCodes: [1] });
  const rules = why.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[0]);
  throw new GenesisError(
    'manifest-ignored',
    `${left.join(', ')} would not be in the world: ${from}'s .gitignore ignores ${left.length === 1 ? 'it' : 'them'}${rules.length ? ` (${rules.join('; ')})` : ''}`,
    { hint: `allow ${left.length === 1 ? 'it' : 'them'} in .gitignore (add a line ${left.map((f) => `!/${f}`).join(', ')}), then run init again` },
  );
}

/** The task files of tasksDir as paths relative to the world (what the manifest reads them from). */
async function taskFilesOnDisk(from: string, tasksDir: string): Promise<string[]> {
  const dir = tasksDir.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  const names = await readdir(join(from, dir)).catch(() => [] as string[]);
  return names.filter((n) => /\.ya?ml$/.test(n)).map((n) => `${dir}/${n}`);
}

/** verify.deps.files must name files of the starting content: the first gate keys its set on them. */
async function checkDepsFilesExist(repo: string, tree: string, manifest: WorldManifest): Promise<void> {
  if (!manifest.verify.deps) return;
  const files = await readDepsFiles(repo, tree, manifest.verify.deps.files);
  const missing = files.filter((f) => f.content === null).map((f) => f.path);
  if (missing.length > 0) throw missingDepsFilesError(missing, 'the starting content');
}

export async function refuseExisting(path: string): Promise<void> {
  const info = await stat(path).catch(() => null);
  if (!info) return;
  const empty = info.isDirectory() && (await readdir(path)).length === 0;
  if (!empty) {
    throw new GenesisError('world-exists', `${path} already exists`, {
      hint: 'choose a new --world directory, or remove the old one if you no longer need it',
    });
  }
}
