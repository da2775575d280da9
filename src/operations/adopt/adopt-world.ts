import { readFile, rm, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import { planGate } from '../../gate/plan.js';
import { runGate, type GateRunVerdict } from '../../gate/gate.js';
import { saveBaseline, saveScoredNames } from '../../gate/test-baseline.js';
import { git, gitValue } from '../../git/git.js';
import { overlayFiles } from '../../git/tree/overlay.js';
import { findClosedTasks } from '../../manifest/closed-tasks.js';
import { parseManifest, readManifest } from '../../manifest/parse.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { TRAILERS } from '../../world/history/accepted-history.js';
import { writeAdoption } from '../../world/history/adoption.js';
import { formatCommitMessage } from '../../world/commit-message.js';
import { LocalWorld } from '../../world/local-world.js';
import type { WorldRepo } from '../../world/world-repo.js';
import { refuseExisting } from '../init-world.js';
import { missingProgram, missingProgramError } from '../missing-program.js';
import { guessManifest } from './guess-manifest.js';

export interface AdoptWorldInput {
  worldPath: string;
  /** A path (a repository or a bundle) or a git URL. */
  source: string;
  /** The source's branch to continue. @default the branch the source's HEAD names */
  branch?: string;
  /** A world.yaml to add when the repository has none (else one is guessed from its package.json). */
  manifestFile?: string;
  sandbox: (m: WorldManifest) => Promise<Sandbox>;
  /** Told what adoption waits on (a sentence), and null when it ends. */
  onWait?: (what: string | null) => void;
}

export interface AdoptWorldResult {
  world: WorldRepo;
  manifest: WorldManifest;
  warnings: string[];
  /** The repository's head that was adopted. */
  adopted: string;
  /** The source's branch it is the head of (`HEAD` for a source whose HEAD is detached). */
  sourceBranch: string;
  /** The first Genesis-accepted commit: `adopted` itself, or the commit that added world.yaml on it. */
  commit: string;
  /** Whether world.yaml was added in a commit of its own. */
  manifestAdded: boolean;
  /** Commits of the repository's own history (first parent) up to its head. */
  historyCommits: number;
  gate: GateRunVerdict;
}

const SOURCE_REF = 'refs/genesis/adopt/source';

/**
 * `genesis init --adopt`: a world whose accepted branch continues a repository's own history.
 * The repository's branch is fetched whole into a new bare repository; its head (with world.yaml
 * laid over it when it has none) must pass the gate, and becomes the first accepted commit. The
 * history under it is kept as it is and marked as history (ADOPTED_REF), so audit and the
 * integrator judge only what came after. On any failure nothing is left behind.
 */
export async function adoptWorld(input: AdoptWorldInput): Promise<AdoptWorldResult> {
  const source = await sourceLocation(input.source);
  const path = resolve(input.worldPath);
  await refuseExisting(path);
  await git(['init', '--quiet', '--bare', path], { cwd: '/' });
  try {
    const branch = input.branch ?? (await sourceHeadBranch(path, source));
    const from = branch === 'HEAD' ? 'HEAD' : `refs/heads/${branch}`;
    const fetched = await git(['fetch', '--quiet', '--no-tags', source, `+${from}:${SOURCE_REF}`], { cwd: path, okExitCodes: [1, 128] });
    if (fetched.exitCode !== 0) {
      throw new GenesisError('adopt-source-unreadable', `could not fetch branch "${branch}" of ${input.source}`, {
        hint: 'check the path or URL and that the branch exists (--branch names it; git ls-remote <source> lists them)',
      });
    }
    const head = await gitValue(['rev-parse', `${SOURCE_REF}^{commit}`], { cwd: path });
    const world = LocalWorld.at(path);
    const inTree = await world.readFile(head, 'world.yaml');
    const manifestText =
      inTree ?? (input.manifestFile ? await readManifestFile(input.manifestFile) : await guessManifest(world, head, nameOf(input.source), input.source));
    const manifest = readManifest(manifestText, inTree !== null ? `world.yaml at ${head.slice(0, 12)}` : (input.manifestFile ?? 'the guessed world.yaml'));
    const { warnings } = parseManifest(manifestText);
    if (inTree !== null && input.manifestFile) warnings.push(`the repository has its own world.yaml, so ${input.manifestFile} was not used`);
    const closed = findClosedTasks(manifest);
    if (closed.length > 0) {
      throw new GenesisError('task-paths-protected', `tasks ${closed.map((t) => t.id).join(', ')} may change nothing: protected covers every path of them`, {
        hint: 'give each task a path outside protected: in world.yaml',
      });
    }
    await git(['symbolic-ref', 'HEAD', `refs/heads/${manifest.branch}`], { cwd: path });
    const headTree = await world.treeOf(head);
    const tree = inTree !== null ? headTree : await overlayFiles(path, headTree, { 'world.yaml': manifestText }, join(path, 'genesis-adopt.index'));
    const sandbox = await input.sandbox(manifest);
    await sandbox.check();
    const gateWait = `the gate of the adopted head (verify's steps in the ${sandbox.kind} sandbox)`;
    input.onWait?.(gateWait);
    const gate = await runGate({
      repo: path,
      tree,
      steps: planGate(manifest, null, new Set()),
      manifest,
      sandbox,
      workDir: join(world.scratchDir, 'gates', 'adopt'),
      ratchet: manifest.verify.mode === 'ratchet' ? { minScore: 0 } : undefined,
      onWait: (what) => input.onWait?.(what ?? gateWait),
      // A failing step runs once more (with more time for tests that ran out of it) before the head is refused:
      // a loaded machine does not decide whether a project can be adopted.
      flaky: { base: null, ownCheck: null },
    }).finally(() => input.onWait?.(null));
    if (!gate.ok) {
      // As init says it: the program the sandbox lacks and the two ways out, not a log to read.
      const missing = missingProgram(gate.record, gate.log);
      if (missing) throw missingProgramError(missing, gate.record);
      throw new GenesisError(
        'adopt-head-failed',
        `the head of ${input.source} (${branch} @ ${head.slice(0, 12)}) does not pass the gate, run twice: ${gate.message}\n${gate.log.slice(-2000)}`,
        {
          hint: 'verify.test must pass on the head as it is: fix world.yaml (the commands, verify.deps, the image), or adopt a branch whose head passes',
        },
      );
    }
    const score = gate.record.score === undefined || gate.record.score === null ? [] : [[TRAILERS.score, String(gate.record.score)] as const];
    const commit =
      inTree !== null
        ? head
        : await world.commitTree(
            tree,
            [head],
            formatCommitMessage(`world ${manifest.name}: adopted at ${head.slice(0, 12)}`, '', [
              [TRAILERS.verified, gate.record.summary],
              ...score,
              [TRAILERS.adopted, head],
            ]),
          );
    await world.compareAndSwap(`refs/heads/${manifest.branch}`, commit, null);
    await writeAdoption(path, { commit, source });
    await git(['update-ref', '-d', SOURCE_REF], { cwd: path });
    await saveBaseline(world.scratchDir, tree, gate.passing);
    // As for a new world: a ratchet counts the tests the adopted head reported, so a test an agent's
    // own code registers raises no score (without this record every passing test would count).
    if (manifest.verify.mode === 'ratchet') await saveScoredNames(world.scratchDir, tree, gate.testNames);
    const historyCommits = Number(await gitValue(['rev-list', '--first-parent', '--count', head], { cwd: path }));
    return { world, manifest, warnings, adopted: head, sourceBranch: branch, commit, manifestAdded: inTree === null, historyCommits, gate };
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The branch a source's HEAD names, as `git clone` would check out: `HEAD` itself when it is
 * detached, the one branch of a source that lists no HEAD (a bundle of one branch), else `main`.
 */
async function sourceHeadBranch(cwd: string, source: string): Promise<string> {
  const listed = await git(['ls-remote', '--symref', source, 'HEAD'], { cwd, okExitCodes: [1, 2, 128] });
  const named = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(listed.stdout);
  if (named) return named[1] as string;
  if (/^[0-9a-f]+\tHEAD$/m.test(listed.stdout)) return 'HEAD';
  const listedHeads = await git(['ls-remote', '--heads', source], { cwd, okExitCodes: [1, 2, 128] });
  const heads = listedHeads.stdout.split('\n').flatMap((line) => line.split('\trefs/heads/').slice(1));
  return heads.length === 1 ? (heads[0] as string) : 'main';
}

/** A local path made absolute (the world's publish: and calibrate find it again from anywhere); a URL as given. */
async function sourceLocation(source: string): Promise<string> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^[^/]+@[^/]+:/.test(source)) return source;
  const path = resolve(source);
  if (!(await stat(path).catch(() => null))) {
    throw new GenesisError('adopt-source-unreadable', `${path} does not exist`, {
      hint: 'pass --adopt a repository path, a git bundle or a git URL',
    });
  }
  return path;
}

async function readManifestFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => {
    throw new GenesisError('manifest-missing', `${file} cannot be read`, { hint: 'point --manifest at the world.yaml to add to the adopted repository' });
  });
}

/** A world name from the source's last path segment. */
function nameOf(source: string): string {
  const last = basename(source.replace(/\/+$/, '')).replace(/\.(git|bundle)$/, '');
  const cleaned = last.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned || 'adopted';
}
