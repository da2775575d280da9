import { compileChainModel, type ChainInput, type ChainModel } from './chain-model.js';
import { createRng, type Rng } from './prng.js';
import { assertInteger, rejectModelInput } from './validate.js';
import { computeWilsonInterval, Z_95 } from './wilson.js';

/** How a simulated step ended: accepted and right, accepted but wrong, or out of attempts. */
export type StepEnding = 'correct' | 'wrong' | 'gave-up';

/** One simulated step: how it ended and how many attempts it took. */
export interface SimulatedStep {
  ending: StepEnding;
  attempts: number;
}

/**
 * Plays one step one attempt at a time, drawing from `rng`: an attempt fails visibly with e, is
 * silently wrong with w, right otherwise; a verifier (if recall or falseReject is above 0) then
 * rejects a wrong result with recall and a right one with falseReject. A visible error or a
 * rejection is retried until the model's attempts run out.
 */
export function simulateStep(model: ChainModel, rng: Rng): SimulatedStep {
  const verifier = model.recall > 0 || model.falseReject > 0;
  for (let round = 1; round <= model.attempts; round += 1) {
    // Every racer of the round runs (and costs); the first the verifier accepts wins.
    let winner: StepEnding | null = null;
    for (let racer = 0; racer < model.race; racer += 1) {
      const u = rng.next();
      if (u < model.e) continue;
      const right = u >= model.e + model.w;
      if (verifier) {
        const v = rng.next();
        if (right ? v < model.falseReject : v < model.recall) continue;
      }
      winner ??= right ? 'correct' : 'wrong';
    }
    if (winner) return { ending: winner, attempts: round * model.race };
  }
  return { ending: 'gave-up', attempts: model.attempts * model.race };
}

/** Which chain lengths to simulate, how many runs, and the seed that makes it reproducible. */
export interface SimulationOptions {
  /** Chain lengths (steps) to report; all are read off the same runs, as prefixes of one chain. */
  lengths: readonly number[];
  /** Runs to simulate. */
  runs: number;
  /** Seed of the PRNG, an integer in [0, 2^32 − 1]. */
  seed: number;
}

/** The simulated counterpart of a closed-form chain length, with 95% intervals. */
export interface SimulatedLength {
  steps: number;
  runs: number;
  seed: number;
  /** Runs whose every step ended accepted and right. */
  successes: number;
  success: number;
  /** Wilson 95% interval of `success`. */
  low: number;
  high: number;
  meanAttempts: number;
  /** Sample standard deviation of the attempts of one run. */
  attemptsSd: number;
  /** Normal 95% interval of `meanAttempts` (mean ± 1.96·sd/√runs). */
  attemptsLow: number;
  attemptsHigh: number;
}

interface Tally {
  successes: number;
  mean: number;
  m2: number;
  count: number;
}

// Welford's update: a running sum of squares would lose digits over thousands of runs.
function record(tally: Tally, success: boolean, attempts: number): void {
  if (success) tally.successes += 1;
  tally.count += 1;
  const delta = attempts - tally.mean;
  tally.mean += delta / tally.count;
  tally.m2 += delta * (attempts - tally.mean);
}

/**
 * Simulates `runs` chains of the longest requested length, step by step and attempt by attempt;
 * a run stops at a step that gives up (as the closed form assumes) and carries on, doomed, after
 * a silently wrong one. A shorter length is read off as a prefix of the same runs. Results come
 * back in the order of `options.lengths`.
 */
export function simulateChain(input: ChainInput, options: SimulationOptions): SimulatedLength[] {
  const model = compileChainModel(input);
  assertInteger('runs', options.runs, 1);
  if (options.lengths.length === 0) rejectModelInput('lengths must name at least one chain length');
  for (const steps of options.lengths) assertInteger('steps', steps, 1);
  const rng = createRng(options.seed);
  const checkpoints = [...new Set(options.lengths)].sort((x, y) => x - y);
  const maxSteps = checkpoints[checkpoints.length - 1] ?? 1;
  const tallies = checkpoints.map((): Tally => ({ successes: 0, mean: 0, m2: 0, count: 0 }));

  for (let run = 0; run < options.runs; run += 1) {
    let attempts = 0;
    let allCorrect = true;
    let next = 0;
    for (let step = 1; step <= maxSteps; step += 1) {
      const outcome = simulateStep(model, rng);
      attempts += outcome.attempts;
      if (outcome.ending !== 'correct') allCorrect = false;
      if (outcome.ending === 'gave-up') break;
      while (checkpoints[next] === step) record(tallies[next++] as Tally, allCorrect, attempts);
    }
    // A run that gave up counts as a failure, with the attempts it spent, at every longer length.
    while (next < checkpoints.length) record(tallies[next++] as Tally, false, attempts);
  }

  return options.lengths.map((steps) => {
    const tally = tallies[checkpoints.indexOf(steps)] as Tally;
    const interval = computeWilsonInterval(tally.successes, options.runs);
    const attemptsSd = options.runs > 1 ? Math.sqrt(tally.m2 / (options.runs - 1)) : 0;
    const margin = (Z_95 * attemptsSd) / Math.sqrt(options.runs);
    return {
      steps,
      runs: options.runs,
      seed: options.seed,
      successes: tally.successes,
      success: tally.successes / options.runs,
      low: interval.low,
      high: interval.high,
      meanAttempts: tally.mean,
      attemptsSd,
      attemptsLow: tally.mean - margin,
      attemptsHigh: tally.mean + margin,
    };
  });
}
