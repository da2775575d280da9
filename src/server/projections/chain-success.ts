import { computeHorizonSteps, computeWilsonInterval } from '../../reliability/index.js';

/** Success against chain length: the closed forms as lines and what the ledger measured as points. */
export interface ChainSuccess {
  /** Per-episode success p the lines are drawn from. */
  p: number;
  /** Per-task success with `attempts` tries and the measured deterministic fraction. */
  pTask: number;
  attempts: number;
  maxLength: number;
  /** p^n: a chain of n episodes, each accepted first time. */
  perEpisode: Array<{ n: number; success: number }>;
  /** pTask^n: a chain of n tasks, each allowed `attempts` tries. */
  perTask: Array<{ n: number; success: number }>;
  /** Runs of n consecutive decided episodes that were all accepted, with Wilson 95% intervals. */
  measured: Array<{ n: number; chains: number; successes: number; rate: number; low: number; high: number }>;
}

/** Lengths a chart reads well on a linear axis: dense at the start, sparser later. */
const NICE_LENGTHS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500];

/**
 * Builds the chart data. The x-axis reaches twice the 50% horizon of p (at least 10 steps, at most
 * 500), where the per-episode line has fallen to a quarter. Measured points cut the episodes, in
 * the order they started, into non-overlapping runs of n, so the runs are separate trials and a
 * Wilson interval applies; points with fewer than two runs are left out. Where failures come in
 * bursts (correlated), the points sit above p^n: that is the correlation term of the model, seen.
 */
export function computeChainSuccess(decidedInOrder: readonly boolean[], p: number, pTask: number, attempts: number): ChainSuccess {
  const half = p >= 1 ? 50 : computeHorizonSteps(p, 0.5);
  const maxLength = Math.min(500, Math.max(10, Math.ceil(2 * half)));
  const step = Math.max(1, Math.ceil(maxLength / 100));
  const lengths: number[] = [];
  for (let n = 1; n <= maxLength; n += step) lengths.push(n);
  if (lengths.at(-1) !== maxLength) lengths.push(maxLength);
  const measured = NICE_LENGTHS.filter((n) => n <= maxLength && decidedInOrder.length / n >= 2).map((n) => {
    const chains = Math.floor(decidedInOrder.length / n);
    let successes = 0;
    for (let i = 0; i < chains; i++) {
      if (decidedInOrder.slice(i * n, (i + 1) * n).every(Boolean)) successes++;
    }
    return { n, chains, successes, rate: successes / chains, ...computeWilsonInterval(successes, chains) };
  });
  return {
    p,
    pTask,
    attempts,
    maxLength,
    perEpisode: lengths.map((n) => ({ n, success: p ** n })),
    perTask: lengths.map((n) => ({ n, success: pTask ** n })),
    measured,
  };
}
