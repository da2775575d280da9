import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

/**
 * The seed of a world of independent tasks whose gate takes a while (1.5 s of sleep, then node
 * --test in bubblewrap) and three episodes at once: changes made on one base wait in the
 * integration queue to be verified on top of the ones ahead. In a ratchet world no change takes
 * its place before its own gate, so each is verified in the queue, `slots` at a time.
 */
export async function slowGateSeed(dir: string, options: { ratchet?: boolean; slots?: number } = {}): Promise<string> {
  const seed = join(dir, 'seed');
  await mkdir(join(seed, 'notes'), { recursive: true });
  await mkdir(join(seed, 'test'), { recursive: true });
  await writeFile(join(seed, 'notes', '.keep'), '');
  await writeFile(join(seed, 'test', 'ok.test.js'), "const test = require('node:test');\ntest('ok', () => {});\n");
  await writeFile(
    join(seed, 'world.yaml'),
    stringify({
      name: 'queue-view',
      goal: { outcome: 'every note written' },
      verify: { sandbox: 'bwrap', test: 'sleep 1.5 && node --test test/', timeoutSec: 120, ...(options.ratchet ? { mode: 'ratchet' } : {}) },
      protected: ['test/**', 'world.yaml'],
      agent: { kind: 'command', command: ['sh', '-c', 'sleep 0.5; echo "$GENESIS_EPISODE_ID" > "notes/$GENESIS_TASK_ID.txt"'], timeoutSec: 60 },
      retry: { maxAttempts: 1 },
      parallelism: 3,
      ...(options.slots ? { integration: { slots: options.slots } } : {}),
      tasks: Array.from({ length: 6 }, (_, i) => ({ id: `t${i + 1}`, title: `note ${i + 1}`, paths: [`notes/t${i + 1}.txt`] })),
    }),
  );
  return seed;
}
