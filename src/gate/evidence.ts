import type { Sandbox } from '../sandbox/sandbox.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { runGate, type GateRunVerdict } from './gate.js';

/** Runs the goal's evidence command on an accepted commit, in the gate's sandbox. */
export async function checkEvidence(world: WorldRepo, sandbox: Sandbox, manifest: WorldManifest, commit: string): Promise<GateRunVerdict | null> {
  const evidence = manifest.goal.evidence;
  if (!evidence) return null;
  const steps = [
    ...(manifest.verify.setup.trim() ? [{ name: 'setup', command: manifest.verify.setup }] : []),
    ...(manifest.verify.build.trim() ? [{ name: 'build', command: manifest.verify.build }] : []),
    { name: 'evidence', command: evidence },
  ];
  return runGate({
    repo: world.path,
    tree: await world.treeOf(commit),
    steps,
    manifest,
    sandbox,
    workDir: `${world.scratchDir}/gates/evidence-${commit.slice(0, 12)}`,
  });
}
