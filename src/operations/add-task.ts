import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import { planGate } from '../gate/plan.js';
import { runGate } from '../gate/gate.js';
import { saveBaseline } from '../gate/test-baseline.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { TRAILERS } from '../world/history/accepted-history.js';
import { formatCommitMessage } from '../world/commit-message.js';
import { readManifest } from '../manifest/parse.js';
import type { WorldManifest } from '../manifest/schema.js';
import { acquireRunLock } from '../world/run-lock.js';
import type { WorldRepo } from '../world/world-repo.js';
import { appendToYamlList } from './yaml-append.js';
import { landByCompareAndSwap, type LandSteering } from './land-steering.js';

/**
 * Adds a task to world.yaml on the accepted branch. The manifest is protected from episodes, so
 * this is the person's way to grow the task list: the new manifest is validated, the new tree is
 * verified like any accepted tree, and the branch moves by compare-and-swap. world.yaml gains the
 * new task's lines and nothing else changes (comments, layout, quoting).
 */
export async function addTask(world: WorldRepo, task: Record<string, unknown>, sandboxFor: (m: WorldManifest) => Promise<Sandbox>): Promise<string> {
  // A running integrator puts back any branch move it did not make: add tasks between runs.
  const lock = await acquireRunLock(world.scratchDir);
  try {
    return await addTaskUnlocked(world, task, sandboxFor);
  } finally {
    await lock.release();
  }
}

/**
 * The same, for a caller that already holds the world: under the run lock, or a running scheduler,
 * whose lander moves the branch (`land`) between two landings.
 */
export async function addTaskUnlocked(
  world: WorldRepo,
  task: Record<string, unknown>,
  sandboxFor: (m: WorldManifest) => Promise<Sandbox>,
  land?: LandSteering,
): Promise<string> {
  const current = await world.manifestAt('HEAD');
  const head = await world.head(current.branch);
  const original = (await world.readFile(head, 'world.yaml')) ?? '';
  if (current.tasks.some((t) => t.id === task.id)) {
    throw new GenesisError('task-exists', `the world already has a task "${String(task.id)}"`, { hint: 'choose another id' });
  }
  // A person's world.yaml is theirs: only the new task's lines are added.
  const text = appendToYamlList(original, 'tasks', task);
  const manifest = readManifest(text, 'world.yaml with the new task');
  await mkdir(world.scratchDir, { recursive: true });
  const tree = await world.overlayFiles(head, { 'world.yaml': text }, join(world.scratchDir, `add-task-${process.pid}.index`));
  const sandbox = await sandboxFor(manifest);
  const gate = await runGate({
    repo: world.path,
    tree,
    steps: planGate(manifest, null, await world.doneTasks(manifest.branch, head)),
    manifest,
    sandbox,
    workDir: `${world.scratchDir}/gates/add-task`,
  });
  if (!gate.ok) {
    throw new GenesisError('task-add-failed', `the world with the new task does not pass its gate: ${gate.message}`, {
      hint: 'the accepted history is unchanged; fix the world first',
    });
  }
  const commit = await world.commitTree(
    tree,
    [head],
    formatCommitMessage(`world: add task ${String(task.id)}`, '', [[TRAILERS.verified, gate.record.summary]]),
  );
  if (!(await (land ?? landByCompareAndSwap(world, manifest.branch))(commit, head))) {
    throw new GenesisError('head-moved', 'the accepted branch moved while the task was being added', { hint: 'run the command again' });
  }
  // The next gates compare with what passed here instead of running this head's tests again.
  await saveBaseline(world.scratchDir, tree, gate.passing);
  return commit;
}
