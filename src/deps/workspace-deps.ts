import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldManifest } from '../manifest/schema.js';
import { applyDepsLayout } from './apply-layout.js';
import type { DepsCache } from './cache/cache.js';
import { normalizeTreePath } from '../manifest/deps-rules.js';
import { machineDepsCache } from './gate-deps.js';
import { prepareDeps } from './prepare-deps.js';

export interface WorkspaceDeps {
  /** Tree paths the candidate never takes from the workspace (the outputs). */
  exclude: string[];
  /** Host paths a sandboxed agent must see read-only for the links to resolve. */
  readOnly: string[];
  /** One line for the episode's log: what the workspace got. */
  note: string;
}

export interface WorkspaceDepsInput {
  repo: string;
  /** The workspace's working tree, checked out at `base`. */
  dir: string;
  base: string;
  manifest: WorldManifest;
  /** The gate's sandbox: the workspace gets the very set its gate will mount. */
  sandbox: Sandbox;
  cache?: DepsCache;
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
}

/**
 * Gives a workspace its base's dependency set, the one the gate of the same base mounts: each
 * output directory (node_modules) is a real directory of the workspace whose entries link into
 * the cache, so the agent's own test runs find the packages at once and tools may still write
 * their caches beside them. The outputs are listed in the workspace's .git/info/exclude, so the
 * agent's git never sees them, and the candidate is collected without them. A set that cannot be
 * prepared is noted, not fatal: the gate will say why.
 */
export async function linkWorkspaceDeps(input: WorkspaceDepsInput): Promise<WorkspaceDeps | null> {
  const spec = input.manifest.verify.deps;
  if (!spec) return null;
  const exclude = spec.paths.map(normalizeTreePath);
  await mkdir(join(input.dir, '.git', 'info'), { recursive: true });
  await appendFile(
    join(input.dir, '.git', 'info', 'exclude'),
    `\n# dependency outputs linked in by Genesis (verify.deps.paths)\n${exclude.map((p) => `/${p}`).join('\n')}\n`,
  );
  const prepared = await prepareDeps({
    repo: input.repo,
    tree: input.base,
    spec,
    sandbox: input.sandbox,
    image: input.manifest.verify.image,
    cache: input.cache ?? machineDepsCache(),
    ...(input.onWait ? { onWait: input.onWait } : {}),
  });
  if (!prepared.ok) return { exclude, readOnly: [], note: `deps: the workspace has no dependency set: ${prepared.message}` };
  const problem = await applyDepsLayout(input.dir, prepared.layout, { linkViews: true });
  if (problem) return { exclude, readOnly: [], note: `deps: the workspace has no dependency set: ${problem}` };
  const sources = [...new Set(prepared.layout.mounts.map((m) => m.source))];
  return { exclude, readOnly: sources, note: `deps: ${prepared.key.slice(0, 12)} linked into the workspace (${sources.length} entries)` };
}
