import { fitLogistic, type LogisticMethod } from './logistic-fit.js';
import { createRng, type Rng } from './prng.js';
import { assertInteger, assertOpenProbability, assertPositive, rejectModelInput } from './validate.js';

/** One attempt at a task whose length is known in human minutes. */
export interface HorizonPoint {
  /** How long a skilled person takes for the task. */
  minutes: number;
  success: boolean;
  /** The task, when several attempts share one; the bootstrap then resamples tasks, not attempts. */
  task?: string;
}

/** Settings of {@link fitHorizon}. */
export interface HorizonFitOptions {
  /** Success rates at which to read the horizon. @default [0.5, 0.8] */
  thresholds?: readonly number[];
  /** Bootstrap resamples for the intervals; 0 skips them. @default 200 */
  bootstrap?: number;
  /** Seed of the bootstrap's PRNG. @default 1 */
  seed?: number;
}

/** The task length at which the fitted success rate crosses `threshold`, with a bootstrap 95% interval. */
export interface FittedHorizon {
  threshold: number;
  /** Infinity when the fitted success does not fall with task length (slope >= 0). */
  minutes: number;
  /** 2.5th and 97.5th bootstrap percentiles; null without a bootstrap. */
  low: number | null;
  high: number | null;
}

/** A METR-style fit: P(success) = σ(intercept + slope·log2(minutes)). */
export interface HorizonFit {
  points: number;
  successes: number;
  /** Distinct tasks (points without a task each count as one). */
  tasks: number;
  intercept: number;
  /** Change in log-odds of success per doubling of task length; negative when longer tasks fail more. */
  slope: number;
  method: LogisticMethod;
  separable: boolean;
  converged: boolean;
  horizons: FittedHorizon[];
  bootstrap: { samples: number; seed: number; resampled: 'tasks' | 'points' };
}

/** 2^((logit(s) − intercept)/slope): where σ(intercept + slope·log2 m) = s. */
export function computeFittedHorizon(intercept: number, slope: number, threshold: number): number {
  assertOpenProbability('threshold (success threshold)', threshold);
  if (!(slope < 0)) return Number.POSITIVE_INFINITY;
  return 2 ** ((Math.log(threshold / (1 - threshold)) - intercept) / slope);
}

// Linear interpolation between order statistics (R's type 7); an infinite neighbour wins.
function percentile(sorted: readonly number[], q: number): number {
  const position = q * (sorted.length - 1);
  const lo = sorted[Math.floor(position)] as number;
  const hi = sorted[Math.ceil(position)] as number;
  const fraction = position - Math.floor(position);
  if (fraction === 0 || lo === hi) return lo;
  if (!Number.isFinite(hi)) return hi;
  return lo + (hi - lo) * fraction;
}

function resample(groups: readonly (readonly HorizonPoint[])[], rng: Rng): HorizonPoint[] {
  const sample: HorizonPoint[] = [];
  for (let i = 0; i < groups.length; i += 1) sample.push(...(groups[rng.nextInt(groups.length)] ?? []));
  return sample;
}

/**
 * Fits success against log2(human minutes) by maximum likelihood, as METR does for its time
 * horizons, and reads off the task length at each success threshold. Intervals come from a
 * seeded bootstrap over tasks (or points when tasks are not named); a resample in which the
 * slope is not negative counts as an unbounded horizon, so an interval may reach Infinity.
 */
export function fitHorizon(points: readonly HorizonPoint[], options: HorizonFitOptions = {}): HorizonFit {
  const thresholds = options.thresholds ?? [0.5, 0.8];
  const samples = options.bootstrap ?? 200;
  const seed = options.seed ?? 1;
  for (const threshold of thresholds) assertOpenProbability('threshold (success threshold)', threshold);
  assertInteger('bootstrap (resamples)', samples, 0);
  for (const point of points) assertPositive('minutes (human minutes of a task)', point.minutes);
  const successes = points.filter((point) => point.success).length;
  if (successes === 0 || successes === points.length) {
    rejectModelInput(`a horizon fit needs both successes and failures, got ${successes} of ${points.length}`);
  }
  const fit = (sample: readonly HorizonPoint[]) =>
    fitLogistic(
      sample.map((point) => Math.log2(point.minutes)),
      sample.map((point) => point.success),
    );
  const main = fit(points);

  // Attempts at one task are correlated, so the task is the unit a bootstrap may draw.
  const byTask = new Map<string, HorizonPoint[]>();
  points.forEach((point, i) => {
    const key = point.task === undefined ? `\u0000${i}` : `task:${point.task}`;
    const group = byTask.get(key);
    if (group) group.push(point);
    else byTask.set(key, [point]);
  });
  const groups = [...byTask.values()];
  const draws: number[][] = thresholds.map(() => []);
  if (samples > 0) {
    const rng = createRng(seed);
    for (let b = 0; b < samples; b += 1) {
      const sample = resample(groups, rng);
      const values = new Set(sample.map((point) => point.minutes));
      // A resample with one task length has no slope: the data cannot bound the horizon.
      const refit = values.size > 1 ? fit(sample) : undefined;
      thresholds.forEach((threshold, t) => {
        const minutes = refit ? computeFittedHorizon(refit.intercept, refit.slope, threshold) : Infinity;
        draws[t]?.push(minutes);
      });
    }
  }
  return {
    points: points.length,
    successes,
    tasks: groups.length,
    intercept: main.intercept,
    slope: main.slope,
    method: main.method,
    separable: main.separable,
    converged: main.converged,
    horizons: thresholds.map((threshold, t) => {
      const sorted = (draws[t] ?? []).sort((x, y) => x - y);
      return {
        threshold,
        minutes: computeFittedHorizon(main.intercept, main.slope, threshold),
        low: sorted.length > 0 ? percentile(sorted, 0.025) : null,
        high: sorted.length > 0 ? percentile(sorted, 0.975) : null,
      };
    }),
    bootstrap: { samples, seed, resampled: points.some((point) => point.task !== undefined) ? 'tasks' : 'points' },
  };
}
