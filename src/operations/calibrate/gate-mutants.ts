import { join } from 'node:path';
import type { RejectionReason } from '../../errors/rejection-reasons.js';
import { planGate } from '../../gate/plan.js';
import { runGate } from '../../gate/gate.js';
import { git } from '../../git/git.js';
import { overlayFiles } from '../../git/tree/overlay.js';
import { matchesAny } from '../../manifest/path-patterns.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { createRng } from '../../reliability/prng.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LocalWorld } from '../../world/local-world.js';
import { readExecutedLines, withExecutedLines } from './executed-lines.js';
import { applyMutation, findMutationSites, TYPESCRIPT, type MutationSite } from './mutation-sites.js';
import type { CalibrationGate } from './calibration-gate.js';

export interface MutantOutcome extends MutationSite {
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
  /** Whether the sites were limited to lines the tests executed (a Node suite's coverage of JavaScript); else every line of the sources (always for TypeScript). */
  executedLinesOnly: boolean;
  files: string[];
}

/** JavaScript sources; TypeScript ones (TYPESCRIPT) are mutated too. */
const SOURCE = /\.(c|m)?js$/;
const TESTS = /(^|\/)(test|tests|__tests__|spec|example|examples|bench|benchmark|node_modules|dist|coverage)\/|\.(test|spec)\.[cm]?[jt]sx?$/;

/**
 * Mutants of the head's own sources, each a small plausible mistake (an operator, a constant, a
 * condition negated, a statement removed) on a line its tests execute, gated as an episode's
 * change to the head would be. The share rejected is the gate's recall d on this project; the
 * survivors show what its tests do not check (or mutants that change nothing: they lower d too).
 */
export async function gateMutants(input: MutantsInput): Promise<MutantsResult> {
  const { scratch, manifest } = input;
  const head = await scratch.commitTree(input.headTree, [], 'the head, mutated');
  const executed = await executedLines(input);
  const listed = (await git(['ls-tree', '-r', '--name-only', input.headTree], { cwd: scratch.path })).stdout.split('\n');
  // Node's coverage of a TypeScript file counts offsets in the code its runner transformed, not in
  // the file: its lines cannot be told, so every line of it is a site (d is then a lower bound).
  const files = listed.filter(
    (p) => (TYPESCRIPT.test(p) || (SOURCE.test(p) && (!executed || executed.has(p)))) && !TESTS.test(p) && !matchesAny(p, manifest.protected),
  );
  const sites: MutationSite[] = [];
  for (const path of files) {
    const text = (await scratch.readFile(head, path)) ?? '';
    sites.push(...findMutationSites(path, text, TYPESCRIPT.test(path) ? null : (executed?.get(path) ?? null)));
  }
  const rng = createRng(input.seed);
  for (let i = sites.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng.next() * (i + 1));
    [sites[i], sites[j]] = [sites[j]!, sites[i]!];
  }
  const chosen = sites.slice(0, input.count);
  const outcomes: MutantOutcome[] = new Array(chosen.length);
  let done = 0;
  const gateOne = async (site: MutationSite, i: number): Promise<void> => {
    const started = Date.now();
    const text = (await scratch.readFile(head, site.path)) ?? '';
    const candidateTree = await overlayFiles(scratch.path, input.headTree, { [site.path]: applyMutation(text, site) }, join(scratch.path, `mutant-${i}.index`));
    const verdict = await input.gate({ head, fromTree: input.headTree, candidateTree, name: `mutant-${i}` });
    outcomes[i] = { ...site, killed: !verdict.ok, ...(verdict.ok ? {} : { reason: verdict.reason }), durationMs: Date.now() - started };
    done += 1;
    input.onGated?.(outcomes[i]!, done, chosen.length);
  };
  // The first learns the head's baseline, which every other then reads.
  if (chosen.length > 0) await gateOne(chosen[0]!, 0);
  const queue = chosen.slice(1).map((site, k) => ({ site, i: k + 1 }));
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) await gateOne(next.site, next.i);
  };
  await Promise.all(Array.from({ length: Math.max(1, input.jobs) }, worker));
  return { outcomes, sites: sites.length, executedLinesOnly: executed !== null && !files.some((p) => TYPESCRIPT.test(p)), files };
}

/** The lines of each source the head's tests execute, from one gate run with coverage on; null when the suite wrote none. */
async function executedLines(input: MutantsInput): Promise<Map<string, Set<number>> | null> {
  const manifest = { ...input.manifest, verify: { ...input.manifest.verify, test: withExecutedLines(input.manifest.verify.test) } };
  const run = await runGate({
    repo: input.scratch.path,
    tree: input.headTree,
    steps: planGate(manifest, null, new Set()),
    manifest,
    sandbox: input.sandbox,
    workDir: join(input.scratch.scratchDir, 'gates', 'executed-lines'),
  });
  const lines = readExecutedLines(run.log);
  return lines && lines.size > 0 ? lines : null;
}
