import { join } from 'node:path';
import type { RejectionReason } from '../../errors/rejection-reasons.js';
import { planGate } from '../../gate/plan.js';
import { runGate } from '../../gate/gate.js';
import { saveBaseline } from '../../gate/test-baseline.js';
import { git } from '../../git/git.js';
import { overlayFiles } from '../../git/tree/overlay.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { createRng } from '../../reliability/prng.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LocalWorld } from '../../world/local-world.js';
import { readExecutedLines, withExecutedLines } from './coverage/executed-lines.js';
import { mutationLanguageOf, type MutationLanguage } from './mutants/languages.js';
import { linesToMutate } from './mutants/lines-to-mutate.js';
import { mutableSources } from './mutants/not-source.js';
import { secondMutantGateSec } from './mutants/second-gate.js';
import { applyMutation, type MutationSite } from './mutants/site.js';
import type { CalibrationGate } from './calibration-gate.js';
import { testsReported } from './head-tests.js';

export interface MutantOutcome extends MutationSite {
  language: MutationLanguage['name'];
  /** The gate rejected it: the verifier caught a wrong change. */
  killed: boolean;
  reason?: RejectionReason;
  durationMs: number;
}

export interface MutantsInput {
  scratch: LocalWorld;
  manifest: WorldManifest;
  /** The accepted head's tree, world.yaml included. */
  headTree: string;
  /** Runs the coverage run that finds executed lines; always in this process. */
  sandbox: Sandbox;
  /** Where each mutant is gated (this process, or the world's workers). */
  gate: CalibrationGate;
  count: number;
  seed: number;
  jobs: number;
  onGated?: (outcome: MutantOutcome, done: number, of: number) => void;
}

export interface MutantsResult {
  outcomes: MutantOutcome[];
  /** Sites found (before the sample of `count`). */
  sites: number;
  /** Whether every site was on a line the tests executed; false when some file's lines could not be told (no coverage, or TypeScript its runner transformed without a source map), so every line of it was a site. */
  executedLinesOnly: boolean;
  files: string[];
  /** The time each mutant's gate had (mutantTimeoutSec). */
  timeoutSec: number;
  /** The head's suite reported no test at all, so no mutant was made: none could be caught. */
  headRanNoTest: boolean;
}

/**
 * Mutants of the head's own sources (JavaScript, TypeScript, Python, each by its own operators in
 * mutants/), each a small plausible mistake (an operator, a constant, a condition negated, a value
 * returned, a statement removed) on a line its tests execute, gated as an episode's
 * change to the head would be. The share rejected is the gate's recall d on this project; the
 * survivors show what its tests do not check (or mutants that change nothing: they lower d too).
 */
export async function gateMutants(input: MutantsInput): Promise<MutantsResult> {
  const { scratch, manifest } = input;
  const head = await scratch.commitTree(input.headTree, [], 'the head, mutated');
  const coverageStarted = Date.now();
  const { executed, baselineKept, ranNoTest } = await runHeadGate(input);
  const timeoutSec = mutantTimeoutSec(Date.now() - coverageStarted, manifest.verify.timeoutSec);
  if (ranNoTest) return { outcomes: [], sites: 0, executedLinesOnly: executed !== null, files: [], timeoutSec, headRanNoTest: true };
  const listed = (await git(['ls-tree', '-r', '--name-only', input.headTree], { cwd: scratch.path })).stdout.split('\n');
  const files: string[] = [];
  const sites: Array<MutationSite & { language: MutationLanguage['name'] }> = [];
  let everyLine = false;
  const isSource = mutableSources(listed, manifest.protected);
  const linesOf = linesToMutate(executed, isSource);
  for (const path of listed) {
    const language = mutationLanguageOf(path);
    if (!language || !isSource(path)) continue;
    const lines = linesOf(path, language);
    if (lines === undefined) continue;
    if (lines === null) everyLine = true;
    files.push(path);
    const text = (await scratch.readFile(head, path)) ?? '';
    sites.push(...language.findSites(path, text, lines).map((site) => ({ ...site, language: language.name })));
  }
  const rng = createRng(input.seed);
  for (let i = sites.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng.next() * (i + 1));
    [sites[i], sites[j]] = [sites[j]!, sites[i]!];
  }
  const chosen = sites.slice(0, input.count);
  const outcomes: MutantOutcome[] = new Array(chosen.length);
  let done = 0;
  const gateOne = async (site: MutationSite & { language: MutationLanguage['name'] }, i: number): Promise<void> => {
    const started = Date.now();
    const text = (await scratch.readFile(head, site.path)) ?? '';
    const candidateTree = await overlayFiles(scratch.path, input.headTree, { [site.path]: applyMutation(text, site) }, join(scratch.path, `mutant-${i}.index`));
    let verdict = await input.gate({ head, fromTree: input.headTree, candidateTree, name: `mutant-${i}`, timeoutSec, rerunOnlyTimeouts: true });
    const againSec = verdict.ok ? null : secondMutantGateSec(verdict.reason, timeoutSec, manifest.verify.timeoutSec);
    if (againSec !== null) {
      verdict = await input.gate({ head, fromTree: input.headTree, candidateTree, name: `mutant-${i}-again`, timeoutSec: againSec, rerunOnlyTimeouts: true });
    }
    outcomes[i] = { ...site, killed: !verdict.ok, ...(verdict.ok ? {} : { reason: verdict.reason }), durationMs: Date.now() - started };
    done += 1;
    input.onGated?.(outcomes[i]!, done, chosen.length);
  };
  // Without the head gate's baseline (it ran out of time), the first learns it, and every other then reads it.
  const first = baselineKept ? 0 : Math.min(1, chosen.length);
  if (first === 1) await gateOne(chosen[0]!, 0);
  const queue = chosen.slice(first).map((site, k) => ({ site, i: k + first }));
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) await gateOne(next.site, next.i);
  };
  await Promise.all(Array.from({ length: Math.max(1, input.jobs) }, worker));
  return { outcomes, sites: sites.length, executedLinesOnly: !everyLine, files, timeoutSec, headRanNoTest: false };
}

/** A mutant gate's time is at least this, however fast the suite (its run again gets twice it). */
const MUTANT_TIMEOUT_FLOOR_SEC = 20;
/** Times the coverage run (already slower than the suite: it traces every line) a mutant's gate may take. */
const MUTANT_TIMEOUT_FACTOR = 3;

/**
 * The time a mutant's gate gets: a mutant that loops forever (a loop's step turned round) is
 * caught by running out of time, and the gate's own limit (600 s by default) would hold a slot
 * that long. As mutation testers do (Stryker's
 * timeoutFactor), the limit follows the suite's own time instead: three times the coverage run,
 * never under 20 s, never over verify.timeoutSec. A step that runs out of it is run again with
 * twice the time and more CPUs before the mutant counts as caught (the gate's onlyTimeouts
 * mode), so a loaded machine does not turn a slow pass into a catch, and a mutant that loops
 * forever costs three times this limit. Pure.
 */
export function mutantTimeoutSec(coverageRunMs: number, gateTimeoutSec: number): number {
  return Math.min(gateTimeoutSec, Math.max(MUTANT_TIMEOUT_FLOOR_SEC, Math.ceil((MUTANT_TIMEOUT_FACTOR * coverageRunMs) / 1000)));
}

/**
 * The head's one gate: its suite run with coverage on gives the lines of each source the tests
 * execute (null when the suite wrote none) and, kept as the head tree's baseline under the test
 * command, the tests every mutant's gate must still pass, so no mutant's gate runs the head again.
 * `ranNoTest`: the suite's report counted no test.
 */
async function runHeadGate(input: MutantsInput): Promise<{ executed: Map<string, Set<number>> | null; baselineKept: boolean; ranNoTest: boolean }> {
  const { test } = input.manifest.verify;
  const manifest = { ...input.manifest, verify: { ...input.manifest.verify, test: withExecutedLines(test) } };
  const run = await runGate({
    repo: input.scratch.path,
    tree: input.headTree,
    steps: planGate(manifest, null, new Set()),
    manifest,
    sandbox: input.sandbox,
    workDir: join(input.scratch.scratchDir, 'gates', 'executed-lines'),
  });
  const lines = readExecutedLines(run.log);
  // As a gate learning a head's baseline does: a run that ran out of time tells nothing reliable.
  const baselineKept = run.ok || run.reason !== 'gate-timeout';
  if (baselineKept) await saveBaseline(input.scratch.scratchDir, input.headTree, { [test]: run.passing[manifest.verify.test] ?? [] });
  return { executed: lines && lines.size > 0 ? lines : null, baselineKept, ranNoTest: testsReported(run.record) === 0 };
}
