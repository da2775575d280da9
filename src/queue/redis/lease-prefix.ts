/**
 * The overlap rule of the Redis path leases, which a Lua script must be able to evaluate: each
 * pattern is reduced to its static prefix, and two prefixes conflict when one is a segment-wise
 * prefix of the other. Coarser than `patternsOverlap` (world/path-patterns.ts) and never less
 * conservative: whenever two patterns could match the same file, their prefixes conflict.
 * Pure, no I/O.
 */
import picomatch from 'picomatch/posix.js';

// Wider than picomatch's own notion of a glob ('!', '\\', a lone '{'): cutting a prefix short
// only makes a lease more exclusive, never less.
const GLOB_CHARACTER = /[*?[\]{}!()\\]/;

function isGlobSegment(segment: string): boolean {
  return GLOB_CHARACTER.test(segment) || picomatch.scan(segment).isGlob;
}

/** Trims, and drops a leading `./` and trailing slashes, as path-patterns.ts does. */
function normalizePattern(pattern: string): string {
  let p = pattern.trim();
  while (p.startsWith('./')) p = p.slice(2);
  while (p.endsWith('/')) p = p.slice(0, -1);
  return p === '.' ? '' : p;
}

/**
 * The segments of `pattern` before the first one holding a glob character (`* ? [ ] { } ! ( )`
 * or a backslash), joined with '/': `src/lib/*.ts` → `src/lib`, `src/` → `src`, `**\/*.md` → ''.
 * The empty prefix stands for the whole tree.
 */
export function staticPrefix(pattern: string): string {
  const segments = normalizePattern(pattern).split('/');
  const firstGlob = segments.findIndex(isGlobSegment);
  return (firstGlob === -1 ? segments : segments.slice(0, firstGlob)).join('/');
}

/**
 * True when two static prefixes may share a file: they are equal, one is a segment-wise prefix
 * of the other (`src` and `src/lib`, not `src` and `srcs`), or either is empty. The Lua twin of
 * this function lives in redis-path-leases.ts.
 */
export function staticPrefixesConflict(a: string, b: string): boolean {
  if (a === '' || b === '' || a === b) return true;
  return a.length < b.length ? b.startsWith(`${a}/`) : a.startsWith(`${b}/`);
}

/** The distinct static prefixes of a task's paths, as the lease script compares them. */
export function staticPrefixes(patterns: readonly string[]): string[] {
  return [...new Set(patterns.map(staticPrefix))];
}
