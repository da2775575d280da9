import { computeWilsonInterval } from '../../reliability/index.js';

/** A decided episode (accepted, rejected or failed) placed in time. */
export interface DecidedEpisode {
  endedAt: string;
  accepted: boolean;
}

/** Acceptance among the episodes decided in one time bucket, with its Wilson 95% interval. */
export interface AcceptanceBucket {
  start: string;
  end: string;
  accepted: number;
  decided: number;
  rate: number | null;
  low: number;
  high: number;
}

/** Acceptance over time: per bucket, and the running rate after each decided episode. */
export interface AcceptanceOverTime {
  bucketMs: number;
  buckets: AcceptanceBucket[];
  cumulative: Array<{ at: string; accepted: number; decided: number; rate: number }>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Bucket widths a person reads without arithmetic, smallest first. */
export const BUCKET_STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 7 * 24 * HOUR] as const;

/**
 * Groups decided episodes into buckets of the smallest readable width that keeps their number
 * at most `maxBuckets`, aligned to UTC multiples of the width so the same ledger always gives the
 * same buckets. Empty buckets between busy ones are kept: a gap in a multi-day run is news.
 */
export function computeAcceptanceOverTime(episodes: readonly DecidedEpisode[], maxBuckets = 24): AcceptanceOverTime {
  const sorted = [...episodes].sort((a, b) => Date.parse(a.endedAt) - Date.parse(b.endedAt));
  let accepted = 0;
  const cumulative = sorted.map((e, i) => {
    if (e.accepted) accepted++;
    return { at: e.endedAt, accepted, decided: i + 1, rate: accepted / (i + 1) };
  });
  if (sorted.length === 0) return { bucketMs: BUCKET_STEPS[0], buckets: [], cumulative };
  const first = Date.parse(sorted[0]!.endedAt);
  const last = Date.parse(sorted.at(-1)!.endedAt);
  const bucketMs = BUCKET_STEPS.find((step) => Math.floor(last / step) - Math.floor(first / step) + 1 <= maxBuckets) ?? BUCKET_STEPS.at(-1)!;
  const origin = Math.floor(first / bucketMs) * bucketMs;
  const count = Math.floor((last - origin) / bucketMs) + 1;
  const tallies = Array.from({ length: count }, () => ({ accepted: 0, decided: 0 }));
  for (const e of sorted) {
    const tally = tallies[Math.floor((Date.parse(e.endedAt) - origin) / bucketMs)]!;
    tally.decided++;
    if (e.accepted) tally.accepted++;
  }
  const buckets = tallies.map((t, i) => ({
    start: new Date(origin + i * bucketMs).toISOString(),
    end: new Date(origin + (i + 1) * bucketMs).toISOString(),
    accepted: t.accepted,
    decided: t.decided,
    rate: t.decided === 0 ? null : t.accepted / t.decided,
    ...computeWilsonInterval(t.accepted, t.decided),
  }));
  return { bucketMs, buckets, cumulative };
}
