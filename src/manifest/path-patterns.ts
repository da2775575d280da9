/**
 * Path patterns: how a world names the parts of its tree (a task's `paths`, the `protected`
 * list). Paths are repo-relative with '/' separators, as git reports them. Pure, no I/O.
 *
 * A pattern is an exact file (`src/add.js`), a directory (`src` or `src/`: everything under it)
 * or a picomatch glob (`test/**`, `src/*.js`, `**\/*.md`; dot files match). A glob that matches
 * a directory also covers everything under it, so `packages/*\/src` means what it says.
 */
import picomatch from 'picomatch/posix.js';

// nonegate: a leading '!' is refused by describePatternProblem; if one slips through it must not
// turn an allow-list entry into "everything except".
const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true };

// Bounded so a long-lived server that loads many worlds does not grow without limit.
const CACHE_LIMIT = 10_000;
const matcherCache = new Map<string, (path: string) => boolean>();
const globSegmentCache = new Map<string, boolean>();

/** Drops a leading `./` and trailing slashes, which users write but which change nothing. */
function normalizePattern(pattern: string): string {
  let p = pattern.trim();
  while (p.startsWith('./')) p = p.slice(2);
  while (p.endsWith('/')) p = p.slice(0, -1);
  return p === '.' ? '' : p;
}

function isGlob(text: string): boolean {
  let glob = globSegmentCache.get(text);
  if (glob === undefined) {
    if (globSegmentCache.size >= CACHE_LIMIT) globSegmentCache.clear();
    glob = picomatch.scan(text).isGlob;
    globSegmentCache.set(text, glob);
  }
  return glob;
}

function compileMatcher(pattern: string): (path: string) => boolean {
  const p = normalizePattern(pattern);
  if (p === '') return () => false;
  if (!isGlob(p)) return (path) => path === p || path.startsWith(`${p}/`);
  const isMatch = picomatch(p, GLOB_OPTIONS);
  return (path) => {
    if (isMatch(path)) return true;
    for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
      if (isMatch(path.slice(0, i))) return true;
    }
    return false;
  };
}

/** True when `path` is the file `pattern` names, lies under the directory it names, or matches its glob. */
export function matchesPattern(path: string, pattern: string): boolean {
  let matcher = matcherCache.get(pattern);
  if (matcher === undefined) {
    if (matcherCache.size >= CACHE_LIMIT) matcherCache.clear();
    matcher = compileMatcher(pattern);
    matcherCache.set(pattern, matcher);
  }
  return matcher(path);
}

/** True when `path` matches at least one of `patterns` (none matches an empty list). */
export function matchesAny(path: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => matchesPattern(path, pattern));
}

/** True when a '/' sits inside a brace or extglob group, where splitting at '/' would be wrong. */
function hasSlashInGroup(pattern: string): boolean {
  let depth = 0;
  for (const char of pattern) {
    if (char === '{' || char === '(') depth += 1;
    else if ((char === '}' || char === ')') && depth > 0) depth -= 1;
    else if (char === '/' && depth > 0) return true;
  }
  return false;
}

function segmentsMayMatch(a: string, b: string): boolean {
  const globA = isGlob(a);
  const globB = isGlob(b);
  if (!globA && !globB) return a === b;
  // Two glob segments could be intersected exactly, but a false "overlap" only delays a task.
  if (globA && globB) return true;
  return globA ? picomatch.isMatch(b, a, GLOB_OPTIONS) : picomatch.isMatch(a, b, GLOB_OPTIONS);
}

function staticSegments(pattern: string): string[] {
  const segments = pattern.split('/');
  const firstGlob = segments.findIndex(isGlob);
  return firstGlob === -1 ? segments : segments.slice(0, firstGlob);
}

/**
 * Conservative: true whenever some path could match both patterns. Segments are compared pairwise;
 * when either pattern runs out first it names a directory (or a glob matching one) that covers
 * everything below, so the two overlap. Used so two running episodes never hold overlapping paths.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const pa = normalizePattern(a);
  const pb = normalizePattern(b);
  if (pa === '' || pb === '') return false;
  if (hasSlashInGroup(pa) || hasSlashInGroup(pb)) {
    const sa = staticSegments(pa);
    const sb = staticSegments(pb);
    const shared = Math.min(sa.length, sb.length);
    return sa.slice(0, shared).every((segment, i) => segment === sb[i]);
  }
  const sa = pa.split('/');
  const sb = pb.split('/');
  for (let i = 0; i < Math.min(sa.length, sb.length); i += 1) {
    const x = sa[i] as string;
    const y = sb[i] as string;
    // '**' can absorb any number of segments, so what follows no longer lines up.
    if (x === '**' || y === '**') return true;
    if (!segmentsMayMatch(x, y)) return false;
  }
  return true;
}

/** True when some pattern of `a` may overlap some pattern of `b`. */
export function patternSetsOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => patternsOverlap(x, y)));
}

/**
 * True for a path segment git treats as its own directory: `.git`, and the spellings that
 * case-insensitive or Windows/macOS filesystems fold into it (`.GIT`, `.git.`, `git~1`).
 */
export function isGitDirName(segment: string): boolean {
  const folded = segment.toLowerCase().replace(/[. ]+$/, '');
  return folded === '.git' || folded === 'git~1';
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what we look for
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Null when `pattern` is usable; otherwise what is wrong with it and how to write it instead.
 * Refused: empty, absolute, `..` or `.` or empty segments, backslashes, control characters,
 * a leading `!` (lists only include), and a `.git` segment.
 */
export function describePatternProblem(pattern: string): string | null {
  const shown = JSON.stringify(pattern);
  const p = normalizePattern(pattern);
  if (p === '') return `pattern ${shown} is empty; name a file ("src/add.js"), a directory ("src") or a glob ("src/**")`;
  if (CONTROL_CHARACTER.test(p)) return `pattern ${shown} contains a control character; remove it`;
  if (p.includes('\\')) return `pattern ${shown} contains a backslash; separate directories with "/" ("src/add.js")`;
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) {
    return `pattern ${shown} is absolute; write it relative to the world's root ("src/add.js")`;
  }
  if (p.startsWith('!')) return `pattern ${shown} is a negation, which is not supported; list only the paths to include`;
  const segments = p.split('/');
  if (segments.includes('..')) return `pattern ${shown} has a ".." segment; a pattern must stay inside the world's tree`;
  if (segments.includes('.') || segments.includes('')) {
    return `pattern ${shown} has an empty or "." segment; write each directory once ("src/lib/a.js")`;
  }
  if (segments.some(isGitDirName)) return `pattern ${shown} names git's own directory (.git), which is never part of a world's paths`;
  return null;
}
