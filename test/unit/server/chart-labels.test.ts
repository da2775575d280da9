import { describe, expect, it } from 'vitest';

// The browser's own module, untyped JavaScript: loaded by its URL with the types of the two functions used.
const { clockFormat, timeTicks } = (await import(new URL('../../../src/server/ui/charts.js', import.meta.url).href)) as {
  clockFormat(min: number, max: number, step: number): (ms: number) => string;
  timeTicks(min: number, max: number): { ticks: number[]; step: number };
};

/** The labels the dashboard's time axes draw for a span of `spanMs` from `from`. */
function labels(from: number, spanMs: number): string[] {
  const { ticks, step } = timeTicks(from, from + spanMs);
  const format = clockFormat(from, from + spanMs, step);
  return ticks.map(format);
}

describe("the dashboard's time axes", () => {
  const from = new Date(2026, 11, 2, 10, 0, 7).getTime();

  it.each([
    ['40 seconds (a run of a minute: the score chart said 10:00 six times)', 40_000],
    ['20 minutes', 20 * 60_000],
    ['5 hours', 5 * 3_600_000],
    ['2 days (13:00 of two days read as one time)', 2 * 86_400_000],
    ['3 weeks', 21 * 86_400_000],
  ])('labels no two ticks alike over %s', (_what, span) => {
    const shown = labels(from, span);
    expect(shown.length).toBeGreaterThan(1);
    expect(new Set(shown).size).toBe(shown.length);
  });

  it('reads the time of day within a day, the date beyond', () => {
    expect(labels(from, 40_000)[0]).toMatch(/^10:00:\d\d$/);
    expect(labels(from, 5 * 3_600_000)[0]).toMatch(/^1\d:\d\d$/);
    expect(labels(from, 2 * 86_400_000)[0]).toMatch(/^12-0\d \d\d:\d\d$/);
  });
});
