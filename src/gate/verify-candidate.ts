import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { GateRecord } from '../world/episode-record.js';
import { withProtectedFrom } from '../world/export-tree.js';
import type { TaskSpec, WorldManifest } from '../world/manifest-schema.js';
import { listChanges } from '../world/tree-diff.js';
import type { WorldRepo } from '../world/world-repo.js';
import { planGate } from './gate-plan.js';
import { runGate } from './gate.js';
import { checkChange, DEFAULT_PRE_GATE_LIMITS } from './pre-gate.js';
import { failureSignature } from './test-report.js';

export type CandidateVerdict =
  | { ok: true; gate: GateRecord; log: string; changedFiles: string[] }
  | { ok: false; reason: string; message: string; signature: string; gate: GateRecord | null; log: string; changedFiles: string[] };

export interface VerifyCandidateInput {
  world: WorldRepo;
  sandbox: Sandbox;
  /** The accepted head: the manifest, protected files and checks all come from here. */
  head: string;
  headManifest: WorldManifest;
  /** The tree the change is measured against (the episode's base, or the head on a replay). */
  fromTree: string;
  candidateTree: string;
  task: TaskSpec;
  doneTasks: ReadonlySet<string>;
  /** Unique name for the gate's scratch directory. */
  name: string;
  /** The tree of the accepted head before this change: a failure that happens there too is not the change's. */
  baseTree?: string;
}

/** The whole gate for one candidate: the checks on the change itself, then the sandboxed run. */
export async function verifyCandidate(input: VerifyCandidateInput): Promise<CandidateVerdict> {
  const { world, headManifest: manifest } = input;
  const changes = await listChanges(world.path, input.fromTree, input.candidateTree);
  const changedFiles = changes.map((c) => c.path);
  const pre = checkChange(changes, {
    protected: manifest.protected,
    taskPaths: input.task.paths,
    maxFileBytes: manifest.verify.maxFileKb * 1024 || DEFAULT_PRE_GATE_LIMITS.maxFileBytes,
    maxChangeBytes: manifest.verify.maxChangeKb * 1024 || DEFAULT_PRE_GATE_LIMITS.maxChangeBytes,
    maxFiles: manifest.verify.maxFiles || DEFAULT_PRE_GATE_LIMITS.maxFiles,
  });
  if (!pre.ok) {
    const log = `pre-gate: ${pre.reason}: ${pre.message}\n`;
    return { ok: false, reason: pre.reason, message: pre.message, signature: failureSignature(pre.reason, null, pre.paths.join('\n')), gate: null, log, changedFiles };
  }
  const scratch = join(world.scratchDir, 'gates', input.name);
  await mkdir(join(world.scratchDir, 'gates'), { recursive: true });
  const tree = await withProtectedFrom(world.path, input.candidateTree, input.head, manifest.protected, `${scratch}.index`);
  await rm(`${scratch}.index`, { force: true });
  const verdict = await runGate({
    repo: world.path,
    tree,
    steps: planGate(manifest, input.task, input.doneTasks),
    manifest,
    sandbox: input.sandbox,
    workDir: scratch,
    flaky: { base: input.baseTree ?? null, ownCheck: `check:${input.task.id}` },
  });
  if (verdict.ok) return { ok: true, gate: verdict.record, log: verdict.log, changedFiles };
  return { ok: false, reason: verdict.reason, message: verdict.message, signature: verdict.signature, gate: verdict.record, log: verdict.log, changedFiles };
}
