import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { createRng } from '../../src/reliability/prng.js';
import { createSandbox } from '../../src/sandbox/create-sandbox.js';
import { initWorld } from '../../src/operations/init-world.js';

/** How the scripted agents of the soak world behave, per task, drawn from a seed. */
export interface SoakWorldOptions {
  tasks: number;
  seed: number;
  /** Failed attempts before the right one, on average (each task draws mean − 1, mean or mean + 1). @default 3 */
  failures?: number;
  parallelism: number;
}

// One awk for every file, so the world's test costs one process however many tasks are done.
const CHECK_ALL = `#!/bin/sh
# Every src/<id>.txt must hold its own id.
exec awk 'FNR == 1 { id = FILENAME; sub(/^src\\//, "", id); sub(/\\.txt$/, "", id); if ($0 != id) { print "not ok: " FILENAME " holds " $0; bad = 1 } } END { if (!bad) print "ok: every file holds its id"; exit bad }' src/*.txt
`;

/**
 * A world of independent tasks worked by the `script` agent: task tNNNN writes src/tNNNN.txt
 * holding its id. Before its right attempt each task fails (by default) two to four times by the seeded draw,
 * alternating a wrong file (rejected by the test) and an agent crash (failed), so no failure
 * repeats the one before (which would block the task early): about four episodes per task, with
 * all three outcomes, and every task done. Few tasks, many episodes, because the manifest is
 * parsed several times per episode and its parse grows with the square of the task count.
 */
export async function createSoakWorld(dir: string, options: SoakWorldOptions): Promise<{ path: string; tasks: string[]; expectedEpisodes: number }> {
  const rng = createRng(options.seed);
  const tasks = Array.from({ length: options.tasks }, (_, i) => `t${String(i + 1).padStart(4, '0')}`);
  const recording: Record<string, unknown[]> = {};
  let expectedEpisodes = 0;
  const mean = Math.max(1, options.failures ?? 3);
  for (const t of tasks) {
    const failures = mean - 1 + rng.nextInt(3);
    const steps: unknown[] = Array.from({ length: failures }, (_, i) =>
      i % 2 === 0 ? { write: { [`src/${t}.txt`]: `not ${t} (attempt ${i + 1})\n` } } : { exit: 1, say: 'simulated crash' },
    );
    recording[t] = [...steps, { write: { [`src/${t}.txt`]: `${t}\n` } }];
    expectedEpisodes += failures + 1;
  }
  const files: Record<string, string> = {
    'checks/all.sh': CHECK_ALL,
    'src/t0000.txt': 't0000\n',
    '.genesis/recording.yaml': stringify({ tasks: recording }),
    'world.yaml': stringify({
      name: 'soak',
      goal: { outcome: 'every src/<id>.txt holds its id' },
      verify: { sandbox: 'bwrap', test: 'sh checks/all.sh', timeoutSec: 60 },
      protected: ['checks/**', 'world.yaml', '.genesis/**'],
      agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 60 },
      retry: { maxAttempts: mean + 2 },
      parallelism: options.parallelism,
      tasks: tasks.map((t) => ({ id: t, title: `file ${t}`, paths: [`src/${t}.txt`] })),
    }),
  };
  const source = join(dir, 'source');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
  const { world } = await initWorld({ worldPath: join(dir, 'w.world'), from: source, sandbox: async () => sandbox });
  return { path: world.path, tasks, expectedEpisodes };
}
