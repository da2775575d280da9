import { createRng } from '../reliability/prng.js';

/**
 * A seeded random sample of `n` items, in their original order; all of them when `n` is undefined
 * or not smaller than the list. The same seed picks the same items on every machine, so an audit
 * that found something can be repeated exactly.
 */
export function sampleItems<T>(items: readonly T[], n: number | undefined, seed: number): T[] {
  if (n === undefined || n >= items.length) return [...items];
  if (n <= 0) return [];
  const rng = createRng(seed);
  const indexes = items.map((_, i) => i);
  // A partial Fisher–Yates shuffle: the first n slots end up a uniform sample.
  for (let i = 0; i < n; i++) {
    const j = i + rng.nextInt(indexes.length - i);
    [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
  }
  return indexes
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]!);
}
