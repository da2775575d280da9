import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A tool call the tool refuses or cannot carry out; its message goes back to the model. */
export class ToolError extends Error {}

/**
 * The host path of `path` (relative to the workspace, or absolute inside it), refused when it
 * leaves the workspace: lexically (`../x`, `/etc/passwd`) or through a symlink anywhere on the
 * way (`link -> /`), since the deepest existing ancestor is resolved with realpath. Writes inside
 * `.git` are refused too: the workspace's git metadata is not part of the change, and hooks there
 * have no business being written by a tool.
 */
export async function resolveInWorkspace(workspace: string, path: string, purpose: 'read' | 'write'): Promise<string> {
  const root = await realpath(workspace);
  const wanted = isAbsolute(path) ? resolve(path) : resolve(root, path || '.');
  // An absolute path may name the workspace by its unresolved host path.
  const lexical = isAbsolute(path) && !inside(root, wanted) && inside(resolve(workspace), wanted) ? join(root, relative(resolve(workspace), wanted)) : wanted;
  if (!inside(root, lexical)) throw new ToolError(`refused: ${path} is outside the workspace; use paths relative to the workspace root`);
  let existing = lexical;
  const rest: string[] = [];
  while (!(await exists(existing))) {
    rest.unshift(basename(existing));
    existing = dirname(existing);
  }
  const resolved = await realpath(existing).catch(() => {
    throw new ToolError(`refused: ${path} goes through a symbolic link that points nowhere`);
  });
  const real = join(resolved, ...rest);
  if (!inside(root, real)) throw new ToolError(`refused: ${path} leads outside the workspace through a symbolic link`);
  if (purpose === 'write' && relative(root, real).split(sep)[0] === '.git')
    throw new ToolError(`refused: ${path} is inside .git; change the working tree only`);
  return real;
}

/** The path as the model should see it: relative to the workspace root. */
export function workspaceRelative(root: string, path: string): string {
  return relative(root, path) || '.';
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
