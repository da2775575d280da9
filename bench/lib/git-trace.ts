import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One git process started directly by the traced work (not git's own children). */
export interface GitStart {
  /** Epoch milliseconds. */
  time: number;
  /** The git subcommand: clone, hash-object, … */
  command: string;
}

/** Options that take a value before the subcommand, so the subcommand is found after them. */
const VALUE_OPTIONS = new Set(['-c', '-C', '--git-dir', '--work-tree']);

function subcommand(argv: string[]): string {
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return '?';
}

/**
 * Runs `work` with git's trace2 event log on (every git process, ours or a script's, inherits
 * GIT_TRACE2_EVENT) and returns the git processes it started. For counting, not timing: tracing
 * slows every git call a little.
 */
export async function traceGit<T>(work: () => Promise<T>): Promise<{ result: T; starts: GitStart[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'genesis-bench-trace-'));
  const file = join(dir, 'trace2.json');
  const previous = process.env.GIT_TRACE2_EVENT;
  process.env.GIT_TRACE2_EVENT = file;
  try {
    const result = await work();
    const text = await readFile(file, 'utf8').catch(() => '');
    const starts = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; sid: string; time: string; argv?: string[] })
      // A child of a git process has a sid "parent/child"; count only what the work started.
      .filter((e) => e.event === 'start' && !e.sid.includes('/'))
      .map((e) => ({ time: Date.parse(e.time), command: subcommand(e.argv ?? []) }));
    return { result, starts };
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE2_EVENT;
    else process.env.GIT_TRACE2_EVENT = previous;
    await rm(dir, { recursive: true, force: true });
  }
}

/** "hash-object 7, ls-tree 5, …", most frequent first. */
export function tally(starts: readonly GitStart[]): string {
  const counts = new Map<string, number>();
  for (const s of starts) counts.set(s.command, (counts.get(s.command) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
}
