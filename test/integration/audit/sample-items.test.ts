import { describe, expect, it } from 'vitest';
import { sampleItems } from '../../../src/audit/index.js';

describe('the seeded sample of commits an audit verifies again', () => {
  const items = Array.from({ length: 100 }, (_, i) => `c${i}`);

  it('is the same for the same seed and differs for another', () => {
    expect(sampleItems(items, 10, 7)).toEqual(sampleItems(items, 10, 7));
    expect(sampleItems(items, 10, 8)).not.toEqual(sampleItems(items, 10, 7));
  });

  it('holds n distinct items in their original order', () => {
    const sample = sampleItems(items, 10, 3);
    expect(new Set(sample).size).toBe(10);
    expect(sample).toEqual([...sample].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
  });

  it('is everything when n is missing or not smaller than the list, and nothing when n is 0', () => {
    expect(sampleItems(items, undefined, 1)).toEqual(items);
    expect(sampleItems(items, 500, 1)).toEqual(items);
    expect(sampleItems(items, 0, 1)).toEqual([]);
  });

  it('picks every item about equally often over many seeds', () => {
    const counts = new Map<string, number>();
    for (let seed = 0; seed < 2000; seed++) for (const item of sampleItems(items, 10, seed)) counts.set(item, (counts.get(item) ?? 0) + 1);
    // Expected 200 picks each; a biased shuffle would leave some items far off.
    for (const item of items) expect(counts.get(item) ?? 0).toBeGreaterThan(140);
    for (const item of items) expect(counts.get(item) ?? 0).toBeLessThan(260);
  });
});
