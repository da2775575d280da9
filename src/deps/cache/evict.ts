export interface CachedSetInfo {
  key: string;
  bytes: number;
  /** When a gate or workspace last used it (ms since the epoch). */
  lastUsedMs: number;
}

export interface EvictionPolicy {
  /** The cache's size cap in bytes. */
  capBytes: number;
  /** Sets used more recently than this are kept whatever the cap (a gate may be reading them). */
  graceMs: number;
  now: number;
  /** Sets never to evict (the one just prepared). */
  keep?: ReadonlySet<string>;
}

/**
 * Which sets to remove so the cache fits its cap: least recently used first, skipping the ones
 * in use or kept. Pure. The cache may stay over its cap when everything left is in use.
 */
export function chooseEvictions(sets: readonly CachedSetInfo[], policy: EvictionPolicy): string[] {
  let total = sets.reduce((sum, s) => sum + s.bytes, 0);
  if (total <= policy.capBytes) return [];
  const evictable = sets
    .filter((s) => !policy.keep?.has(s.key) && policy.now - s.lastUsedMs >= policy.graceMs)
    .sort((a, b) => a.lastUsedMs - b.lastUsedMs || a.key.localeCompare(b.key));
  const chosen: string[] = [];
  for (const set of evictable) {
    if (total <= policy.capBytes) break;
    chosen.push(set.key);
    total -= set.bytes;
  }
  return chosen;
}
