import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { git } from '../../../src/git/git.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `genesis <args>` as a child process, to its end (no shared state: safe to run several at once). */
export async function genesis(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** Writes a world source directory: world.yaml as given (text, so it can be malformed) and files. */
export async function writeSource(dir: string, worldYaml: string, files: Record<string, string> = {}): Promise<string> {
  for (const [path, content] of Object.entries({ ...files, 'world.yaml': worldYaml })) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

/** Every ref of a repository with what it points at: equal snapshots mean nothing moved. */
export async function refsOf(repo: string): Promise<string> {
  return (await git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: repo })).stdout;
}

/**
 * What "one clear error" means for the CLI: exit 1, nothing on stdout, a first line
 * `genesis: <problem> [<code>]`, a `what to do:` line, and no stack trace of an internal error.
 */
export function expectOneClearError(result: CliResult, code: string): { problem: string; hint: string } {
  const lines = result.stderr.trimEnd().split('\n');
  const problems: string[] = [];
  if (result.code !== 1) problems.push(`exit code ${result.code}, expected 1`);
  if (result.stdout !== '') problems.push(`stdout is not empty: ${result.stdout.slice(0, 200)}`);
  if (!lines[0]?.startsWith('genesis: ') || !lines[0].endsWith(`[${code}]`)) problems.push(`first line is not "genesis: … [${code}]": ${lines[0]}`);
  if (lines.filter((l) => l.startsWith('genesis: ')).length !== 1) problems.push('more than one error line');
  const hint = lines.find((l) => l.startsWith('  what to do: '));
  if (!hint) problems.push('no "what to do:" line');
  if (/internal error|\n\s+at /.test(result.stderr)) problems.push('a stack trace');
  if (problems.length > 0) throw new Error(`${problems.join('; ')}\nstderr:\n${result.stderr}`);
  return { problem: result.stderr, hint: hint! };
}
