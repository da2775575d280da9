import { createHash } from 'node:crypto';
import { normalizeTreePath } from '../manifest/deps-rules.js';
import { depsKeyContent } from './npm-key-content.js';

/** Bumped when the layout of a prepared set changes, so old sets are never mistaken for new ones. */
export const DEPS_KEY_VERSION = 2;

export interface DepsKeyInput {
  /** Each file of `verify.deps.files` with its content at the tree (null: absent there). */
  files: ReadonlyArray<{ path: string; content: Buffer | null }>;
  install: string;
  paths: readonly string[];
  /** Where the install runs: an image id, or the host's toolchain (see environmentId). */
  environment: string;
}

/**
 * The key of a dependency set: sha256 over what of the files defines it (for npm's package.json
 * its install fields, see depsKeyContent), the install command, the outputs and the environment. Pure. Every part is length-prefixed, so no two inputs
 * give the same byte stream; file order does not matter.
 */
export function computeDepsKey(input: DepsKeyInput): string {
  const hash = createHash('sha256');
  const part = (label: string, value: Buffer | string) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${label}:${bytes.length}:`);
    hash.update(bytes);
  };
  part('version', String(DEPS_KEY_VERSION));
  part('install', input.install.trim());
  part('environment', input.environment);
  for (const path of [...input.paths].map(normalizeTreePath).sort()) part('output', path);
  const files = [...input.files].map((f) => ({ ...f, path: normalizeTreePath(f.path) })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of files) {
    part('file', file.path);
    if (file.content === null) part('absent', '');
    else part('content', depsKeyContent(file.path, file.content));
  }
  return hash.digest('hex');
}

/** The digest of the files alone: tells whether a candidate changed the files that define its dependencies. */
export function depsFilesDigest(files: ReadonlyArray<{ path: string; content: Buffer | null }>): string {
  return computeDepsKey({ files, install: '', paths: [], environment: '' });
}
