import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from '../../git/git.js';
import { taskSchema, type TaskSpec } from '../../manifest/schema.js';
import { runScratchName } from '../../world/scratch-names.js';
import { LocalWorld } from '../../world/local-world.js';

/**
 * A world of its own for replays and mutants, borrowing the real world's objects (git
 * alternates): the commits, baselines and gate directories a calibration makes never reach the
 * world, and nothing is copied.
 */
export async function openScratchWorld(world: { path: string; scratchDir: string }): Promise<{ scratch: LocalWorld; dispose: () => Promise<void> }> {
  const dir = join(world.scratchDir, 'calibrate', runScratchName('calibrate'));
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'world.git');
  await git(['init', '--quiet', '--bare', path], { cwd: dir });
  await writeFile(join(path, 'objects', 'info', 'alternates'), `${join(world.path, 'objects')}\n`);
  return { scratch: LocalWorld.at(path), dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** The task a replayed change is judged under: the project's own commits may change any path. */
export const REPLAY_TASK: TaskSpec = taskSchema.parse({ id: 'calibrate', title: 'a change the project made', paths: ['**'] });
