/** Order statistics of a sample of durations, in milliseconds. */
export interface Stats {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles: with ten runs p90 is the ninth, not an interpolation nobody saw. */
export function summarize(values: readonly number[]): Stats {
  if (values.length === 0) return { n: 0, median: NaN, p90: NaN, min: NaN, max: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  const mid = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { n: sorted.length, median, p90: rank(0.9), min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** Milliseconds for a table cell: whole numbers from 10 ms up, one decimal below. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return value >= 10 ? String(Math.round(value)) : value.toFixed(1);
}

/** "median (p90, min–max)", the one cell format every table uses. */
export function cell(stats: Stats): string {
  if (stats.n === 0) return '-';
  return `${ms(stats.median)} (${ms(stats.p90)}, ${ms(stats.min)}–${ms(stats.max)})`;
}

/** Times `work` `reps` times, one after the other; returns milliseconds per run. */
export async function timeRuns(reps: number, work: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await work();
    out.push(performance.now() - t0);
  }
  return out;
}
