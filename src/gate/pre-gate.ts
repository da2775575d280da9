/**
 * The checks a candidate's change must pass before any sandbox runs. They read only the change
 * listing (paths, modes, sizes, link targets), so they are cheap, pure and run first; a failed
 * check is a verdict, not an exception.
 */
import { CONTROL_CHARACTER, isGitDirName, matchesAny } from '../manifest/path-patterns.js';
import type { ChangedEntry } from '../git/tree/diff.js';
import type { RejectionReason } from '../errors/rejection-reasons.js';

/** What the pre-gate enforces; `protected` comes from the accepted head, never the candidate. */
export interface PreGateRules {
  protected: readonly string[];
  /** The task's `paths`: every changed path must match one. */
  taskPaths: readonly string[];
  maxFileBytes: number;
  maxChangeBytes: number;
  maxFiles: number;
  /**
   * Paths that must stay one regular file (the handoff file): not a directory with files under it,
   * not a symlink, not deleted. Allowed to every task, but only as that file.
   */
  regularFiles?: readonly string[];
}

export type PreGateReason = Extract<
  RejectionReason,
  | 'empty-change'
  | 'unsafe-path'
  | 'reserved-name'
  | 'not-a-regular-file'
  | 'git-metadata'
  | 'protected-path'
  | 'outside-paths'
  | 'symlink-escape'
  | 'size-limit'
>;

export type PreGateVerdict = { ok: true; files: number; bytes: number } | { ok: false; reason: PreGateReason; message: string; paths: string[] };

/** Limits used when a manifest sets none. */
export const DEFAULT_PRE_GATE_LIMITS: Readonly<{ maxFileBytes: number; maxChangeBytes: number; maxFiles: number }> = Object.freeze({
  maxFileBytes: 1024 * 1024,
  maxChangeBytes: 10 * 1024 * 1024,
  maxFiles: 500,
});

/**
 * Names Genesis itself uses inside a gate's work dir or a workspace (`.genesis-holdout`, where the
 * hidden tests are put): any path segment starting so, in any case, is Genesis's, not a candidate's.
 */
export const RESERVED_NAME_PREFIX = '.genesis-';

/** Longer paths or deeper trees than any source tree needs; past them tools fail (PATH_MAX is 4096). */
export const PATH_LIMITS: Readonly<{ chars: number; depth: number }> = Object.freeze({ chars: 1024, depth: 64 });

/** A manifest's size limits in bytes (`verify.maxFileKb`, `maxChangeKb`, `maxFiles`), the defaults where it sets 0. */
export function sizeLimitsOf(verify: { maxFileKb: number; maxChangeKb: number; maxFiles: number }): {
  maxFileBytes: number;
  maxChangeBytes: number;
  maxFiles: number;
} {
  return {
    maxFileBytes: verify.maxFileKb * 1024 || DEFAULT_PRE_GATE_LIMITS.maxFileBytes,
    maxChangeBytes: verify.maxChangeKb * 1024 || DEFAULT_PRE_GATE_LIMITS.maxChangeBytes,
    maxFiles: verify.maxFiles || DEFAULT_PRE_GATE_LIMITS.maxFiles,
  };
}

/**
 * How large one file of the change may be. The limit keeps out what the world never chose to hold
 * (a bundle, a binary, a dataset an episode writes), which git then keeps for good; a file the
 * accepted head already holds was chosen, by the world's owner or the history it adopted (a
 * lockfile, a snapshot, a page the project regenerates), so the change may grow it by as much as
 * it may write into a new file, and no more: a small file swollen into a large one is still refused.
 */
function fileLimit(entry: ChangedEntry, maxFileBytes: number): number {
  return maxFileBytes + (entry.change === 'modified' ? (entry.baseSize ?? 0) : 0);
}

const SYMLINK_MODE = '120000';
const REGULAR_MODES = new Set(['100644', '100755']);
const GITLINK_MODE = '160000';
const SHOWN_PATHS = 3;

// Git and git-lfs read these from the checked-out tree: filters and submodules can run code or
// pull content from outside the world.
const GIT_METADATA_FILES = new Set(['.gitattributes', '.gitmodules', '.lfsconfig']);

/** A path as a reader sees it: JSON-quoted when it holds spaces, quotes or control characters. */
function showPath(path: string): string {
  return /^[\w./@+=,~-]+$/.test(path) ? path : JSON.stringify(path);
}

/** The first few items, then a count of the rest, so a message stays one readable line. */
function listFew(items: readonly string[]): string {
  const shown = items.slice(0, SHOWN_PATHS);
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

function listPaths(paths: readonly string[]): string {
  return listFew(paths.map(showPath));
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

function isUnsafePath(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.includes('\\') || CONTROL_CHARACTER.test(path)) return true;
  if (Buffer.byteLength(path) > PATH_LIMITS.chars || path.split('/').length > PATH_LIMITS.depth) return true;
  return path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..' || isGitDirName(segment));
}

function isReserved(path: string): boolean {
  return path.split('/').some((segment) => segment.toLowerCase().startsWith(RESERVED_NAME_PREFIX));
}

/** An entry at or under a must-be-regular file that leaves it anything but one regular file. */
function breaksRegularFile(entry: ChangedEntry, files: readonly string[]): boolean {
  return files.some((file) => entry.path.startsWith(`${file}/`) || (entry.path === file && !REGULAR_MODES.has(entry.mode)));
}

function isGitMetadata(entry: ChangedEntry): boolean {
  const name = entry.path.slice(entry.path.lastIndexOf('/') + 1).toLowerCase();
  return GIT_METADATA_FILES.has(name) || entry.mode === GITLINK_MODE;
}

/**
 * Whether a link's target may leave the tree or reach into `.git`. Only leading '..' segments are
 * accepted: a '..' after a name could climb out through another symlink (`d -> ..`, `e -> d/../..`),
 * which a lexical resolution would not see.
 */
function symlinkEscapes(entry: ChangedEntry): boolean {
  const target = entry.symlinkTarget;
  if (target === undefined || target === '' || target.startsWith('/') || CONTROL_CHARACTER.test(target)) return true;
  let depth = entry.path.split('/').length - 1;
  let seenName = false;
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (seenName) return true;
      depth -= 1;
      if (depth < 0) return true;
    } else {
      if (isGitDirName(segment)) return true;
      seenName = true;
    }
  }
  return false;
}

function reject(reason: PreGateReason, paths: string[], message: string): PreGateVerdict {
  return { ok: false, reason, message, paths };
}

function listPatterns(patterns: readonly string[]): string {
  return patterns.length === 0 ? 'none' : patterns.join(', ');
}

/**
 * Checks a change against the rules, in a fixed order so the reason is predictable: empty change,
 * unsafe paths, reserved names, files that must stay regular, git metadata, protected paths, paths outside the task, escaping symlinks, sizes.
 * The first rule broken decides the verdict; its message names the offending paths and what is allowed.
 */
export function checkChange(entries: readonly ChangedEntry[], rules: PreGateRules): PreGateVerdict {
  if (entries.length === 0) {
    return reject('empty-change', [], 'the change is empty; an episode must leave at least one changed file');
  }
  const live = entries.filter((e) => e.change !== 'deleted');
  const bytes = live.reduce((sum, e) => sum + e.size, 0);

  const unsafe = entries.filter((e) => isUnsafePath(e.path)).map((e) => e.path);
  if (unsafe.length > 0) {
    return reject(
      'unsafe-path',
      unsafe,
      `changes unsafe ${plural(unsafe.length, 'path')} ${listPaths(unsafe)}; paths must be relative, use "/", ` +
        `and have no empty, ".", ".." or .git segments and no control characters, and stay under ${PATH_LIMITS.chars} bytes and ${PATH_LIMITS.depth} levels`,
    );
  }
  const reserved = entries.filter((e) => isReserved(e.path)).map((e) => e.path);
  if (reserved.length > 0) {
    return reject(
      'reserved-name',
      reserved,
      `changes ${plural(reserved.length, 'path')} ${listPaths(reserved)} with a name Genesis reserves for itself ` +
        `(anything starting with "${RESERVED_NAME_PREFIX}", such as the gate's .genesis-holdout); rename it`,
    );
  }
  const regular = rules.regularFiles ?? [];
  const irregular = entries.filter((e) => breaksRegularFile(e, regular)).map((e) => e.path);
  if (irregular.length > 0) {
    return reject(
      'not-a-regular-file',
      irregular,
      `changes ${listPaths(irregular)}, but ${listPaths([...regular])} must stay a regular file ` +
        '(append to it; never delete it or make it a directory or a symlink)',
    );
  }
  const metadata = entries.filter(isGitMetadata).map((e) => e.path);
  if (metadata.length > 0) {
    return reject(
      'git-metadata',
      metadata,
      `changes git metadata ${listPaths(metadata)}; .gitattributes, .gitmodules, .lfsconfig and submodules ` +
        '(gitlinks) can run code or pull content from outside the world, so an episode may not change them',
    );
  }
  const prot = entries.filter((e) => matchesAny(e.path, rules.protected)).map((e) => e.path);
  if (prot.length > 0) {
    return reject(
      'protected-path',
      prot,
      `changes protected ${plural(prot.length, 'path')} ${listPaths(prot)} (protected: ${listPatterns(rules.protected)}); ` +
        'an episode may not edit acceptance tests or the manifest',
    );
  }
  const outside = entries.filter((e) => !matchesAny(e.path, rules.taskPaths)).map((e) => e.path);
  if (outside.length > 0) {
    return reject(
      'outside-paths',
      outside,
      `changes ${plural(outside.length, 'path')} ${listPaths(outside)} outside the task's paths ` + `(allowed: ${listPatterns(rules.taskPaths)})`,
    );
  }
  const escaping = live.filter((e) => e.mode === SYMLINK_MODE && symlinkEscapes(e));
  if (escaping.length > 0) {
    const shown = escaping.map((e) => `${showPath(e.path)} -> ${e.symlinkTarget === undefined ? '(unknown)' : showPath(e.symlinkTarget)}`);
    return reject(
      'symlink-escape',
      escaping.map((e) => e.path),
      `adds ${plural(escaping.length, 'symlink')} leaving the tree: ${listFew(shown)}; a symlink must be relative, ` +
        'stay inside the world and not point into .git (".." only at the start of the target)',
    );
  }
  const large = live.filter((e) => e.size > fileLimit(e, rules.maxFileBytes));
  if (large.length > 0) {
    const shown = large.map((e) => `${showPath(e.path)} (${e.size} bytes)`);
    return reject(
      'size-limit',
      large.map((e) => e.path),
      `${large.length} ${plural(large.length, 'file')} over the limit of ${rules.maxFileBytes} bytes per file: ${listFew(shown)} ` +
        '(a file the accepted head holds may grow by that much over its size there); keep generated or binary artefacts out of the world',
    );
  }
  if (bytes > rules.maxChangeBytes) {
    return reject(
      'size-limit',
      live.map((e) => e.path),
      `the change writes ${bytes} bytes in total, over the limit of ${rules.maxChangeBytes}; ` + 'split the task or leave generated files out',
    );
  }
  if (entries.length > rules.maxFiles) {
    return reject(
      'size-limit',
      entries.map((e) => e.path),
      `the change touches ${entries.length} files, over the limit of ${rules.maxFiles}; split the task into smaller ones`,
    );
  }
  return { ok: true, files: entries.length, bytes };
}
