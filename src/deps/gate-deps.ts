import type { Sandbox, SandboxMount } from '../sandbox/sandbox.js';
import type { GateStepRecord } from '../ledger/episode-record.js';
import type { WorldManifest } from '../manifest/schema.js';
import { applyDepsLayout } from './apply-layout.js';
import { DepsCache } from './cache/cache.js';
import { defaultDepsCacheRoot } from './cache/root.js';
import { depsFilesDigest } from './key.js';
import { prepareDeps } from './prepare-deps.js';
import { readDepsFiles } from './read-deps-files.js';

export interface GateDepsInput {
  repo: string;
  tree: string;
  manifest: WorldManifest;
  sandbox: Sandbox;
  /** The gate's work dir, already holding the exported tree. */
  workDir: string;
  /** @default the machine's cache (see defaultDepsCacheRoot) */
  cache?: DepsCache;
  /** The image the gate runs in, when not verify.image (an audit judging in the image that judged first). */
  image?: string;
  /** The base the change was made on: a failure with the base's own dependency files is not the change's. */
  base?: string | null;
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
  /** See PrepareRequest.proveBeside: the gate then waits for `intact` before its verdict. */
  proveBeside?: boolean;
}

export type GateDeps =
  | { ok: true; mounts: SandboxMount[]; step: GateStepRecord; log: string; intact?: Promise<boolean> }
  | { ok: false; reason: 'deps-failed' | 'broken-base'; message: string; signature: string; step: GateStepRecord; log: string; intact?: Promise<boolean> };

let sharedCache: DepsCache | undefined;

/** The cache of this process's machine (made again when GENESIS_CACHE_DIR changes). */
export function machineDepsCache(): DepsCache {
  if (sharedCache?.root !== defaultDepsCacheRoot()) sharedCache = new DepsCache();
  return sharedCache;
}

/**
 * The dependency step of a gate: prepares (or finds) the tree's set and lays it out in the work
 * dir, returning the read-only mounts every later step gets. Null when the world has no
 * verify.deps. A failure is charged to the change only when it changed the dependency files;
 * with the base's own files it is a broken base (or an outage), not the episode's fault.
 */
export async function depsForGate(input: GateDepsInput): Promise<GateDeps | null> {
  const spec = input.manifest.verify.deps;
  if (!spec) return null;
  const prepared = await prepareDeps({
    repo: input.repo,
    tree: input.tree,
    spec,
    sandbox: input.sandbox,
    image: input.image ?? input.manifest.verify.image,
    cache: input.cache ?? machineDepsCache(),
    ...(input.onWait ? { onWait: input.onWait } : {}),
    ...(input.proveBeside ? { proveBeside: true } : {}),
  });
  const step = (exitCode: number, durationMs: number): GateStepRecord => ({
    name: 'deps',
    command: spec.install,
    exitCode,
    timedOut: false,
    oomKilled: false,
    durationMs,
    tests: null,
  });
  if (prepared.ok) {
    const problem = await applyDepsLayout(input.workDir, prepared.layout);
    if (!problem) {
      const how = prepared.hit ? 'found in the cache' : 'installed';
      return {
        ok: true,
        mounts: prepared.layout.mounts,
        step: step(0, prepared.durationMs),
        log: `${prepared.log}deps: ${prepared.key.slice(0, 12)} ${how}, mounted read-only (${prepared.layout.mounts.length} entries)\n`,
        ...(prepared.intact ? { intact: prepared.intact } : {}),
      };
    }
    return {
      ok: false,
      reason: 'deps-failed',
      message: problem,
      signature: 'deps-failed:layout',
      step: step(1, prepared.durationMs),
      log: `${prepared.log}deps: ${problem}\n`,
      ...(prepared.intact ? { intact: prepared.intact } : {}),
    };
  }
  const durationMs = 0;
  if (input.base && prepared.filesDigest !== null) {
    const baseDigest = depsFilesDigest(await readDepsFiles(input.repo, input.base, spec.files));
    if (baseDigest === prepared.filesDigest) {
      const message = `the dependency install fails with the base commit's own dependency files, which this change did not touch (a broken base or a registry outage): ${prepared.message}`;
      return { ok: false, reason: 'broken-base', message, signature: 'broken-base:deps', step: step(1, durationMs), log: prepared.log };
    }
  }
  return {
    ok: false,
    reason: 'deps-failed',
    message: prepared.message,
    signature: `deps-failed:${prepared.message.slice(0, 80)}`,
    step: step(1, durationMs),
    log: prepared.log,
  };
}
