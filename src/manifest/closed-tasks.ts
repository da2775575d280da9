import type { WorldManifest } from './schema.js';
import { matchesAny } from './path-patterns.js';

/**
 * The tasks none of whose paths an episode may change, because `protected` covers every one:
 * every change such a task makes is rejected at the gate, so its attempts are spent for nothing.
 * A glob path counts as covered when the directory before its first glob is (`test/**\/*.ts` under
 * `test/**`). Planner tasks write task files, which the gate judges apart, and are left out.
 */
export function findClosedTasks(manifest: WorldManifest): Array<{ id: string; paths: string[] }> {
  return manifest.tasks
    .filter((task) => task.kind !== 'planner' && task.paths.length > 0)
    .filter((task) => task.paths.every((path) => matchesAny(staticPart(path), manifest.protected)))
    .map((task) => ({ id: task.id, paths: task.paths }));
}

function staticPart(pattern: string): string {
  const segments = pattern
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '')
    .split('/');
  const firstGlob = segments.findIndex((s) => /[*?[\]{}()!+@]/.test(s));
  return (firstGlob === -1 ? segments : segments.slice(0, firstGlob)).join('/');
}
