import { join } from 'node:path';
import { writeSimWorld, type SimWorldOptions } from '../../../../src/agents/sim/world.js';
import { createSandbox } from '../../../../src/sandbox/create-sandbox.js';
import type { Sandbox } from '../../../../src/sandbox/sandbox.js';
import { runEmbedded } from '../../../../src/compose/embedded-run.js';
import type { RunSummary } from '../../../../src/schedule/run/ports/events.js';
import { initWorld } from '../../../../src/operations/init-world.js';
import type { WorldRepo } from '../../../../src/world/world-repo.js';
import { tempDir } from '../../../helpers/temp-dir.js';

/** Bubblewrap: a real sandbox that starts in milliseconds, which calibration needs by the hundred. */
export function bwrapSandbox(): Promise<Sandbox> {
  return createSandbox('bwrap', { image: 'genesis/node:20' });
}

/** Writes a sim-chain world, creates it with the real initWorld and runs the real orchestrator on it. */
export async function runSimFixture(options: SimWorldOptions): Promise<{ world: WorldRepo; summary: RunSummary }> {
  const root = await tempDir('genesis-sim-');
  await writeSimWorld(join(root, 'source'), options);
  const sandbox = await bwrapSandbox();
  const { world } = await initWorld({ worldPath: join(root, 'w.world'), from: join(root, 'source'), sandbox: async () => sandbox });
  const summary = await runEmbedded({ world, sandbox });
  return { world, summary };
}
