import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NO_OP_AGENT, TEST_COMMAND } from './bench-world.js';

const execFileAsync = promisify(execFile);

/**
 * The floor under every column: the agent command and the test command once each, directly on the
 * host, no clone, no sandbox. What a harness adds is its column minus this one. The environment is
 * as bare as the sandboxes' (the host's NODE_EXTRA_CA_CERTS alone costs each node ~40 ms).
 */
export async function measureHostFloor(seedDir: string): Promise<{ agent: number; test: number }> {
  const [file = 'sh', ...args] = NO_OP_AGENT;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', GENESIS_EPISODE_ID: 'floor', GENESIS_TASK_ID: 'floor' };
  await mkdir(join(seedDir, 'notes'), { recursive: true });
  await writeFile(join(seedDir, 'notes', 'floor.txt'), '');
  const t0 = performance.now();
  await execFileAsync(file, args, { cwd: seedDir, env });
  const t1 = performance.now();
  await execFileAsync('sh', ['-c', TEST_COMMAND], { cwd: seedDir, env });
  return { agent: t1 - t0, test: performance.now() - t1 };
}
