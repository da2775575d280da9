import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveLinkInside } from '../sandbox/gate/contained-path.js';
import { dockerClientOf, type Sandbox } from '../sandbox/sandbox.js';
import type { DepsSpec } from '../manifest/schema.js';
import type { DepsCache } from './cache/cache.js';
import { environmentId } from './environment.js';
import { computeDepsKey, depsFilesDigest } from './key.js';
import { planDepsLayout, type DepsLayout, type OutputEntry } from './layout.js';
import { normalizeTreePath } from '../manifest/deps-rules.js';
import { installWithBwrap } from './installers/bwrap.js';
import { installWithDocker } from './installers/docker.js';
import { installWithoutSandbox } from './installers/none.js';
import type { InstallResult, InstallSpec } from './installers/install-spec.js';
import { readDepsFiles } from './read-deps-files.js';

export type PreparedDeps =
  | { ok: true; key: string; hit: boolean; durationMs: number; layout: DepsLayout; log: string; filesDigest: string; intact?: Promise<boolean> }
  | { ok: false; reason: 'deps-failed'; message: string; log: string; filesDigest: string | null };

export interface PrepareDepsInput {
  repo: string;
  tree: string;
  spec: DepsSpec;
  sandbox: Sandbox;
  /** The gate's image: the install runs in it too (docker). */
  image: string;
  cache: DepsCache;
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
  /** See PrepareRequest.proveBeside. */
  proveBeside?: boolean;
}

/** The install of the sandbox kind the gate uses, so the set runs where it was built. */
export function installerFor(sandbox: Sandbox): (spec: InstallSpec) => Promise<InstallResult> {
  if (sandbox.kind === 'docker') {
    const docker = dockerClientOf(sandbox);
    return (spec) => installWithDocker(spec, docker);
  }
  if (sandbox.kind === 'bwrap') return installWithBwrap;
  return installWithoutSandbox;
}

/**
 * The dependency set of a tree, prepared (or found) in this machine's cache, and how it is laid
 * out in a work dir. A failure is a result: files missing from the tree, a failed install, an
 * install that left an output missing. A cache that cannot be written throws (the machine is at
 * fault, not the change).
 */
export async function prepareDeps(input: PrepareDepsInput): Promise<PreparedDeps> {
  const files = await readDepsFiles(input.repo, input.tree, input.spec.files);
  const filesDigest = depsFilesDigest(files);
  // A change may add or remove one of the files (a project that stops committing its lockfile):
  // the set is the one the files present define, and the key says which are absent. Only a tree
  // with none of them has nothing to install from.
  const present = files.filter((f): f is typeof f & { content: Buffer } => f.content !== null);
  if (present.length === 0) {
    const message = `none of verify.deps.files (${files.map((f) => `"${f.path}"`).join(', ')}) is in the tree, so there is nothing to install the dependencies from; keep at least one of them (package.json, a lockfile)`;
    return { ok: false, reason: 'deps-failed', message, log: `deps: ${message}\n`, filesDigest };
  }
  const absent = files.filter((f) => f.content === null).map((f) => f.path);
  const note =
    absent.length > 0
      ? `deps: ${absent.map((a) => `"${a}"`).join(', ')} of verify.deps.files ${absent.length === 1 ? 'is' : 'are'} not in this tree; the set is the one the others define\n`
      : '';
  const environment = await environmentId(input.sandbox, input.image);
  const key = computeDepsKey({ files, install: input.spec.install, paths: input.spec.paths, environment });
  const outcome = await input.cache.ensure({
    key,
    files: present.map((f) => ({ path: f.path, content: f.content })),
    spec: input.spec,
    environment,
    image: input.image,
    install: installerFor(input.sandbox),
    ...(input.onWait ? { onWait: input.onWait } : {}),
    ...(input.proveBeside ? { proveBeside: true } : {}),
  });
  if (!outcome.ok) return { ok: false, reason: outcome.reason, message: outcome.message, log: `${note}${outcome.log}`, filesDigest };
  // A set handed out before its proof: what is wrong in it may be damage done after it was
  // prepared, which is not the change's to answer for; asked again, the cache proves it first.
  const proven = async () => outcome.intact === undefined || (await outcome.intact);
  let outputs: Awaited<ReturnType<typeof readOutputs>>;
  try {
    outputs = await readOutputs(outcome.dir, input.spec.paths);
  } catch (cause) {
    if (!(await proven())) return prepareDeps({ ...input, proveBeside: false });
    throw cause;
  }
  // A set stored before its links were checked: never bind or recreate a link that leads out of it.
  const linked = outputLinkProblem(outputs);
  if (linked) {
    if (!(await proven())) return prepareDeps({ ...input, proveBeside: false });
    await input.cache.remove(key).catch(() => undefined);
    const message = `the prepared dependency set ${key.slice(0, 12)} holds ${linked}; it was removed from the cache, and an install that leaves such a link is not stored again`;
    return { ok: false, reason: 'deps-failed', message, log: `${outcome.log}deps: ${message}\n`, filesDigest };
  }
  const layout = planDepsLayout(outcome.dir, outputs);
  return {
    ok: true,
    key,
    hit: outcome.hit,
    durationMs: outcome.durationMs,
    layout,
    log: `${note}${outcome.log}`,
    filesDigest,
    ...(outcome.intact ? { intact: outcome.intact } : {}),
  };
}

function outputLinkProblem(outputs: ReadonlyArray<{ path: string; type: 'dir' | 'file' | 'link'; entries: readonly OutputEntry[] }>): string | null {
  for (const output of outputs) {
    if (output.type === 'link') return `output "${output.path}" is a symlink`;
    for (const entry of output.entries) {
      if (entry.type !== 'link') continue;
      const lands = resolveLinkInside(`${output.path}/${entry.name}`, entry.linkTarget ?? '');
      if (lands === null || !outputs.some((o) => lands === o.path || lands.startsWith(`${o.path}/`)))
        return `output "${output.path}/${entry.name}" is a symlink out of the set (to ${JSON.stringify(entry.linkTarget)})`;
    }
  }
  return null;
}

async function readOutputs(outDir: string, paths: readonly string[]): Promise<Array<{ path: string; type: 'dir' | 'file' | 'link'; entries: OutputEntry[] }>> {
  const outputs = [];
  for (const path of paths.map(normalizeTreePath)) {
    const info = await lstat(join(outDir, path));
    if (!info.isDirectory()) {
      outputs.push({ path, type: info.isSymbolicLink() ? ('link' as const) : ('file' as const), entries: [] });
      continue;
    }
    const entries: OutputEntry[] = [];
    for (const entry of await readdir(join(outDir, path), { withFileTypes: true })) {
      const type = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : 'file';
      entries.push({ name: entry.name, type, ...(type === 'link' ? { linkTarget: await readlink(join(outDir, path, entry.name)) } : {}) });
    }
    outputs.push({ path, type: 'dir' as const, entries });
  }
  return outputs;
}
