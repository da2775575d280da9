import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { createSandbox } from '../../src/sandbox/create-sandbox.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { initWorld } from '../../src/operations/init-world.js';
import type { WorldRepo } from '../../src/world/world-repo.js';
import { tempDir } from './temp-dir.js';

export type RecordingSteps = Record<string, Array<{ write?: Record<string, string>; delete?: string[]; exit?: number; say?: string; sleepMs?: number }>>;

/** A tiny world: tasks a and b each write one module that their own acceptance test imports. */
export function baseManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'fixture',
    goal: { outcome: 'modules a and b exist' },
    verify: { sandbox: 'auto', test: 'node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 30 },
    retry: { maxAttempts: 2 },
    parallelism: 2,
    tasks: [
      { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' },
      { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js' },
    ],
    ...overrides,
  };
}

export const BASE_FILES: Record<string, string> = {
  'package.json': '{ "type": "module" }\n',
  'src/README.md': 'modules live here\n',
  'test/base.test.js': "import test from 'node:test';\ntest('the world is sane', () => {});\n",
  'test/a.test.js':
    "import test from 'node:test';\nimport assert from 'node:assert';\nimport { a } from '../src/a.js';\ntest('a says a', () => assert.equal(a(), 'a'));\n",
  'test/b.test.js':
    "import test from 'node:test';\nimport assert from 'node:assert';\nimport { b } from '../src/b.js';\ntest('b says b', () => assert.equal(b(), 'b'));\n",
};

export const GOOD_A = "export const a = () => 'a';\n";
export const GOOD_B = "export const b = () => 'b';\n";
export const BAD_A = "export const a = () => 'not a';\n";

export interface FixtureWorld {
  world: WorldRepo;
  sandbox: Sandbox;
  commit: string;
}

/** Writes a world source directory and creates a world from it through the real `initWorld`. */
export async function makeWorld(opts: {
  manifest?: Record<string, unknown>;
  files?: Record<string, string>;
  recording: RecordingSteps;
  sandbox?: 'docker' | 'bwrap' | 'none';
}): Promise<FixtureWorld> {
  const root = await tempDir('genesis-world-');
  const source = join(root, 'source');
  const files = {
    ...BASE_FILES,
    ...opts.files,
    'world.yaml': stringify(opts.manifest ?? baseManifest()),
    '.genesis/recording.yaml': stringify({ tasks: opts.recording }),
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const sandbox = await createSandbox(opts.sandbox ?? 'docker', { image: 'genesis/node:20' });
  const result = await initWorld({ worldPath: join(root, 'w.world'), from: source, sandbox: async () => sandbox });
  return { world: result.world, sandbox, commit: result.commit };
}
