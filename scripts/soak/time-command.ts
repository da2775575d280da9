import { performance } from 'node:perf_hooks';
import { startGenesis } from '../fault-injection/genesis-process.js';

/** Wall time of one `genesis` command to its exit, with its exit code and output size. */
export async function timeGenesis(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ args: string; ms: number; code: number | null; stdoutBytes: number }> {
  const t0 = performance.now();
  const p = startGenesis(args, env);
  const code = await p.exited;
  return { args: args.join(' '), ms: Math.round(performance.now() - t0), code, stdoutBytes: p.lines.reduce((n, l) => n + l.length + 1, 0) };
}
