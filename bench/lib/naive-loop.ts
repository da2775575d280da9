import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { IMAGE, NO_OP_AGENT, TEST_COMMAND } from './bench-world.js';
import { PHASES, type EpisodeTiming } from './episode-timing.js';

const execFileAsync = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../naive-loop.sh', import.meta.url));

/**
 * Runs bench/naive-loop.sh against a world (it pushes to the world's main branch, so give it a
 * world of its own) and parses its one JSON line per episode.
 */
export async function runNaiveLoop(opts: { world: string; episodes: number; workdir: string; first?: number }): Promise<EpisodeTiming[]> {
  const args = [
    SCRIPT,
    '--world',
    opts.world,
    '--episodes',
    String(opts.episodes),
    '--workdir',
    opts.workdir,
    '--image',
    IMAGE,
    '--test',
    TEST_COMMAND,
    '--first',
    String(opts.first ?? 1),
    '--',
    ...NO_OP_AGENT,
  ];
  let stdout: string;
  const started = performance.now();
  try {
    ({ stdout } = await execFileAsync('bash', args, { maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`naive-loop.sh failed: ${e.stdout?.trim().split('\n').at(-1) ?? ''} ${e.stderr?.trim() ?? e.message}`);
  }
  const wall = (performance.now() - started) / opts.episodes;
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => ({ ...parseLine(line), wall }));
}

function parseLine(line: string): Omit<EpisodeTiming, 'wall'> {
  const raw = JSON.parse(line) as Record<string, unknown>;
  if (typeof raw.error === 'string') throw new Error(`naive-loop.sh episode ${String(raw.episode)}: ${raw.error}`);
  const timing = {} as EpisodeTiming;
  for (const phase of PHASES.filter((p) => p !== 'sandbox' && p !== 'prepare' && p !== 'wall')) {
    const value = raw[phase];
    if (typeof value !== 'number') throw new Error(`naive-loop.sh printed no ${phase} in ${line}`);
    timing[phase] = value;
  }
  // The naive gate is nothing but the docker run.
  return { ...timing, prepare: 0, sandbox: timing.gate };
}
