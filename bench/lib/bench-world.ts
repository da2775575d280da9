import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { initWorld } from '../../src/operations/init-world.js';
import type { WorldManifestInput } from '../../src/manifest/schema.js';
import type { WorldRepo } from '../../src/world/world-repo.js';

/** The no-op agent: a one-line change inside the task's paths, the least an accepted episode does. */
export const NO_OP_AGENT = ['sh', '-c', 'echo "$GENESIS_EPISODE_ID" >> "notes/$GENESIS_TASK_ID.txt"'];
/** A real but tiny test run, the same in every column, so differences are the harness's. */
export const TEST_COMMAND = 'node --test test/';
export const IMAGE = 'genesis/node:20';

const SMOKE_TEST = `const test = require('node:test');
const assert = require('node:assert');
test('arithmetic still works', () => assert.strictEqual(1 + 1, 2));
`;

export function taskId(i: number): string {
  return `t${String(i).padStart(5, '0')}`;
}

/** A scratch directory for one benchmark, and a way to remove it whatever happened. */
export async function makeBenchRoot(name: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `genesis-bench-${name}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The content of a benchmark world: one smoke test, an empty notes/ directory, and `tasks`
 * independent tasks, each allowed to touch only its own notes file. No task has a `check`, so the
 * gate runs the same single command for every episode (checks of done tasks would otherwise make
 * later episodes slower than earlier ones), and no `evidence`, which would add a sandbox run
 * after every accepted episode.
 */
export async function writeSeed(dir: string, tasks: number): Promise<void> {
  const manifest: WorldManifestInput = {
    name: 'bench',
    branch: 'main',
    goal: { outcome: 'measure the per-episode overhead of Genesis' },
    verify: { sandbox: 'auto', image: IMAGE, test: TEST_COMMAND, timeoutSec: 60, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
    protected: ['test/**', 'world.yaml'],
    agent: { kind: 'command', command: NO_OP_AGENT, timeoutSec: 30 },
    retry: { maxAttempts: 1 },
    parallelism: 1,
    tasks: Array.from({ length: tasks }, (_, i) => ({
      id: taskId(i + 1),
      title: `note ${i + 1}`,
      paths: [`notes/${taskId(i + 1)}.txt`],
    })),
  };
  await mkdir(join(dir, 'test'), { recursive: true });
  await mkdir(join(dir, 'notes'), { recursive: true });
  await writeFile(join(dir, 'world.yaml'), stringify(manifest));
  await writeFile(join(dir, 'test', 'smoke.test.js'), SMOKE_TEST);
  await writeFile(join(dir, 'notes', '.keep'), '');
}

/** A world made the way `genesis init` makes one (its first commit passes the gate). */
export async function createBenchWorld(root: string, name: string, tasks: number, sandbox: Sandbox): Promise<WorldRepo> {
  const seed = join(root, `${name}-seed`);
  await writeSeed(seed, tasks);
  const { world } = await initWorld({ worldPath: join(root, `${name}.world`), from: seed, sandbox: async () => sandbox });
  return world;
}
