import { describe, expect, it } from 'vitest';
import { computeAcceptanceOverTime } from '../../../src/server/projections/acceptance-over-time.js';

const at = (iso: string, accepted: boolean) => ({ endedAt: iso, accepted });

describe('acceptance over time', () => {
  it('returns no buckets for an empty ledger', () => {
    expect(computeAcceptanceOverTime([])).toMatchObject({ buckets: [], cumulative: [] });
  });

  it('picks one-minute buckets for a short run and counts each with its interval', () => {
    const result = computeAcceptanceOverTime([at('2026-01-01T10:00:10Z', true), at('2026-01-01T10:00:50Z', false), at('2026-01-01T10:02:05Z', true)]);
    expect(result.bucketMs).toBe(60_000);
    expect(result.buckets.map((b) => [b.start, b.accepted, b.decided])).toEqual([
      ['2026-01-01T10:00:00.000Z', 1, 2],
      ['2026-01-01T10:01:00.000Z', 0, 0],
      ['2026-01-01T10:02:00.000Z', 1, 1],
    ]);
    expect(result.buckets[1]).toMatchObject({ rate: null, low: 0, high: 1 });
    expect(result.buckets[0]!.low).toBeLessThan(0.5);
    expect(result.cumulative.map((c) => c.rate)).toEqual([1, 0.5, 2 / 3]);
  });

  it('widens the buckets for a multi-day run so there are at most the asked number', () => {
    const days = Array.from({ length: 5 }, (_, i) => at(`2026-01-0${i + 1}T12:00:00Z`, i % 2 === 0));
    const result = computeAcceptanceOverTime(days, 24);
    expect(result.bucketMs).toBe(6 * 3_600_000);
    expect(result.buckets.length).toBeLessThanOrEqual(24);
    expect(result.buckets.reduce((sum, b) => sum + b.decided, 0)).toBe(5);
  });
});
