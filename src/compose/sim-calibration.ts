import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { judgeSimWorld } from '../agents/sim/hidden-check.js';
import { replaySimRun, type SimReplay } from '../agents/sim/replay.js';
import { computeSimWorldModel, SIM_WORLD_DEFAULTS, writeSimWorld, type SimWorldOptions } from '../agents/sim/world.js';
import { GenesisError } from '../errors/genesis-error.js';
import { computeChainLength, computeStepOutcome, computeWilsonInterval, INVALID_MODEL_INPUT, type ChainInput, type ChainLength } from '../reliability/index.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { initWorld } from '../operations/init-world.js';
import { runEmbedded } from './embedded-run.js';

/** One real run of a sim-chain world: what the orchestrator did and what the hidden check says. */
export interface SimRunOutcome {
  seed: number;
  /** Every task done and the hidden check passes. */
  success: boolean;
  episodes: number;
  done: number;
  wrong: string[];
  /** Why runWorld stopped: `done`, or `blocked` when a step gave up. */
  stop: string;
  durationMs: number;
  /** What the run had to come to; a real run must match it exactly. */
  replay: SimReplay;
}

/**
 * Creates a sim-chain world in `dir` (source directory and bare repository), runs the real
 * orchestrator on it to the end, judges the result with the hidden check, and removes `dir`.
 */
export async function runSimWorld(opts: { dir: string; world: SimWorldOptions; sandbox: Sandbox }): Promise<SimRunOutcome> {
  const started = Date.now();
  const source = join(opts.dir, 'source');
  try {
    await writeSimWorld(source, opts.world);
    const init = await initWorld({ worldPath: join(opts.dir, 'world'), from: source, sandbox: async () => opts.sandbox });
    const summary = await runEmbedded({ world: init.world, sandbox: opts.sandbox });
    const judgement = await judgeSimWorld(init.world);
    return {
      seed: opts.world.seed ?? SIM_WORLD_DEFAULTS.seed,
      success: judgement.success,
      episodes: summary.episodes,
      done: judgement.done,
      wrong: judgement.wrong,
      stop: summary.stop.kind,
      durationMs: Date.now() - started,
      replay: replaySimRun(opts.world),
    };
  } finally {
    await rm(opts.dir, { recursive: true, force: true });
  }
}

/** A configuration run many times, each run with its own seed. */
export interface SimCalibrationOptions {
  /** The world, without its seed: run i gets seed `firstSeed + i`. */
  world: Omit<SimWorldOptions, 'seed'>;
  runs: number;
  firstSeed: number;
  sandbox: Sandbox;
  /** A directory for the worlds (each is removed after its run). */
  root: string;
  /** Worlds run at once; git and the sandbox wait on processes, so more than the cores helps. @default 4 */
  concurrency?: number;
}

/** Measured against predicted, for one configuration. */
export interface SimCalibration {
  model: ChainInput & { steps: number };
  predicted: ChainLength;
  runs: number;
  successes: number;
  success: number;
  /** Wilson 95% interval of `success`. */
  low: number;
  high: number;
  meanAttempts: number;
  attemptsSd: number;
  /** (measured − predicted) / standard error: the binomial one for success, sd/√runs for attempts. */
  successZ: number;
  attemptsZ: number;
  /** Runs whose episodes or success differ from their replay (should be none; a race the replay cannot decide is left out). */
  mismatches: SimRunOutcome[];
  outcomes: SimRunOutcome[];
  durationMs: number;
}

/** Runs one configuration `runs` times on the real orchestrator and compares it with the closed form. */
export async function runSimCalibration(opts: SimCalibrationOptions): Promise<SimCalibration> {
  const started = Date.now();
  if (!Number.isSafeInteger(opts.runs) || opts.runs < 1) {
    throw new GenesisError(INVALID_MODEL_INPUT, `runs must be an integer >= 1, got ${opts.runs}`);
  }
  await mkdir(opts.root, { recursive: true });
  const seeds = Array.from({ length: opts.runs }, (_, i) => opts.firstSeed + i);
  const outcomes = await mapConcurrently(seeds, opts.concurrency ?? 4, (seed) =>
    runSimWorld({ dir: join(opts.root, `run-${seed}`), world: { ...opts.world, seed }, sandbox: opts.sandbox }),
  );
  return summarizeSimRuns(opts.world, outcomes, Date.now() - started);
}

/** Measured rates of a set of runs, beside the closed form of their configuration. */
export function summarizeSimRuns(world: Omit<SimWorldOptions, 'seed'>, outcomes: SimRunOutcome[], durationMs: number): SimCalibration {
  const model = computeSimWorldModel(world);
  const predicted = computeChainLength(computeStepOutcome(model), model.steps);
  const runs = outcomes.length;
  const successes = outcomes.filter((o) => o.success).length;
  const success = successes / runs;
  const meanAttempts = outcomes.reduce((sum, o) => sum + o.episodes, 0) / runs;
  const attemptsSd = Math.sqrt(outcomes.reduce((sum, o) => sum + (o.episodes - meanAttempts) ** 2, 0) / Math.max(1, runs - 1));
  const successError = Math.sqrt((predicted.success * (1 - predicted.success)) / runs);
  return {
    model,
    predicted,
    runs,
    successes,
    success,
    ...computeWilsonInterval(successes, runs),
    meanAttempts,
    attemptsSd,
    successZ: zScore(success - predicted.success, successError),
    attemptsZ: zScore(meanAttempts - predicted.expectedAttempts, attemptsSd / Math.sqrt(runs)),
    mismatches: outcomes.filter((o) => !o.replay.ambiguous && (o.episodes !== o.replay.episodes || o.success !== o.replay.success)),
    outcomes,
    durationMs,
  };
}

// A zero error (a certain outcome) makes any difference infinitely unlikely, and none a perfect fit.
function zScore(difference: number, error: number): number {
  if (error === 0) return difference === 0 ? 0 : Number.POSITIVE_INFINITY * Math.sign(difference);
  return difference / error;
}

/** Maps `items` through `work` with at most `limit` in flight, keeping their order. */
async function mapConcurrently<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
