import type { DepsSpec } from './schema.js';

/**
 * Problems with a tree-relative path of `verify.deps`, or null. Pure. Files and outputs must name
 * a place inside the tree: not absolute, no `..`, no glob, not the tree itself, not git's own dir.
 */
export function describeTreePathProblem(path: string): string | null {
  if (path.startsWith('/')) return `"${path}" is absolute; use a path relative to the tree, e.g. "node_modules"`;
  if (path.includes('\\')) return `"${path}" has a backslash; use "/" between directories`;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0) return `"${path}" names the whole tree; name a file or directory inside it`;
  if (parts.includes('..')) return `"${path}" leaves the tree ("..")`;
  if (/[*?[\]{}!]/.test(path)) return `"${path}" is a pattern; name exact paths`;
  if (parts[0] === '.git') return `"${path}" is inside .git`;
  return null;
}

/** A path in the form the cache and mounts use: no "./", no trailing or doubled slashes. */
export function normalizeTreePath(path: string): string {
  return path
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/**
 * Cross-field rules of `verify.deps`, as `verify.deps.<field>[i]: problem` lines: every path
 * inside the tree, outputs apart from each other and from the files that define them (an install
 * that overwrote its own lockfile could not be keyed by it).
 */
export function depsSpecProblems(spec: DepsSpec): string[] {
  const errors: string[] = [];
  const check = (field: 'files' | 'paths') =>
    spec[field].forEach((path, i) => {
      const problem = describeTreePathProblem(path);
      if (problem) errors.push(`verify.deps.${field}[${i}]: ${problem}`);
    });
  check('files');
  check('paths');
  if (errors.length > 0) return errors;
  const paths = spec.paths.map(normalizeTreePath);
  paths.forEach((path, i) => {
    const other = paths.findIndex((p, j) => j < i && overlaps(p, path));
    if (other >= 0) errors.push(`verify.deps.paths[${i}]: "${path}" overlaps verify.deps.paths[${other}]; list each output once`);
    const file = spec.files.map(normalizeTreePath).findIndex((f) => overlaps(f, path));
    if (file >= 0)
      errors.push(`verify.deps.paths[${i}]: "${path}" overlaps verify.deps.files[${file}]; the install's output cannot hold the files that define it`);
  });
  const files = spec.files.map(normalizeTreePath);
  files.forEach((file, i) => {
    if (files.indexOf(file) < i) errors.push(`verify.deps.files[${i}]: "${file}" is listed twice`);
  });
  return errors;
}
