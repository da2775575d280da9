import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { createSandbox } from '../../src/sandbox/create-sandbox.js';
import { initWorld } from '../../src/operations/init-world.js';

export interface TrialWorldOptions {
  /** Independent tasks t1..tn, each writing one module its check imports. */
  tasks: number;
  /** How long each scripted agent works before it leaves its change. */
  sleepMs: number;
  sandbox: 'bwrap' | 'docker';
  parallelism: number;
}

/**
 * A small world worked by the `script` agent, made through the real initWorld: what a trial runs.
 * Every task is independent, so a fault hits episodes in every phase at once.
 */
export async function createTrialWorld(dir: string, options: TrialWorldOptions): Promise<{ path: string; tasks: string[] }> {
  const tasks = Array.from({ length: options.tasks }, (_, i) => `t${i + 1}`);
  const files: Record<string, string> = {
    'package.json': '{ "type": "module" }\n',
    'test/base.test.js': "import test from 'node:test';\ntest('the world is sane', () => {});\n",
  };
  const recording: Record<string, unknown[]> = {};
  for (const t of tasks) {
    files[`test/${t}.test.js`] =
      `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${t}.js';\ntest('${t}', () => assert.equal(v, '${t}'));\n`;
    recording[t] = [{ write: { [`src/${t}.js`]: `export const v = '${t}';\n` }, sleepMs: options.sleepMs }];
  }
  files['.genesis/recording.yaml'] = stringify({ tasks: recording });
  files['world.yaml'] = stringify({
    name: 'fault-trial',
    goal: { outcome: 'every module exists' },
    verify: { sandbox: options.sandbox, test: 'node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 60 },
    retry: { maxAttempts: 3 },
    parallelism: options.parallelism,
    tasks: tasks.map((t) => ({ id: t, title: `module ${t}`, paths: [`src/${t}.js`], check: `node --test test/${t}.test.js` })),
  });
  const source = join(dir, 'source');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const sandbox = await createSandbox(options.sandbox, { image: 'genesis/node:20' });
  const { world } = await initWorld({ worldPath: join(dir, 'w.world'), from: source, sandbox: async () => sandbox });
  return { path: world.path, tasks };
}
