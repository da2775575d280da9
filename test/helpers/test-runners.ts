import { execFile } from 'node:child_process';
import { access, mkdir, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The JavaScript test runners whose output the gate reads, pinned: fixtures are made by running
 * these, so a new version that prints differently shows up as a failing test when its pin moves.
 */
export const PINNED_RUNNERS = ['mocha@10.8.2', 'tape@5.9.0', 'jest@29.6.3', 'tap@21.8.0'] as const;

/** The coverage tools whose reports calibration reads (nyc's own JSON, c8's V8 coverage), pinned like the runners, and a compiler that writes source maps. */
export const PINNED_COVERAGE_TOOLS = ['nyc@18.0.0', 'c8@12.0.0', 'typescript@5.9.3'] as const;

/** vitest at the version the zod calibration world installs: its workers run vite's transform of TypeScript through vm. */
export const PINNED_VITEST = ['vitest@3.2.4'] as const;

/** jest transforming TypeScript with ts-jest (the last 29 line of each, on a TypeScript ts-jest accepts): ts-jest inlines its source map in the code jest runs by vm. */
export const PINNED_TS_JEST = ['jest@29.7.0', 'ts-jest@29.4.15', 'typescript@5.9.3'] as const;

function cacheRoot(): string {
  return process.env.GENESIS_TEST_CACHE ? join(process.env.GENESIS_TEST_CACHE, 'test-runners') : join(homedir(), '.cache', 'genesis', 'test-runners');
}

/** The node_modules folder holding every pinned runner (installPinned). */
export function installTestRunners(): Promise<string> {
  return installPinned(PINNED_RUNNERS);
}

/**
 * The node_modules folder holding the packages given at their pinned versions, installed from the
 * npm registry into the cache once (under a lock, so test files running at once do not race: the
 * first installs, the others wait and reuse it).
 */
export async function installPinned(packages: readonly string[]): Promise<string> {
  const root = cacheRoot();
  const dir = join(root, packages.join('+').replaceAll('/', '+'));
  const modules = join(dir, 'node_modules');
  const ready = () =>
    access(join(dir, '.complete')).then(
      () => true,
      () => false,
    );
  if (!(await ready())) {
    await mkdir(root, { recursive: true });
    const script = [
      'set -e',
      'test -e "$1/.complete" && exit 0',
      'rm -rf "$1.partial"',
      'shift_dir="$1"; shift',
      'npm install --prefix "$shift_dir.partial" --no-audit --no-fund --loglevel=error "$@" >&2',
      'touch "$shift_dir.partial/.complete"',
      'rm -rf "$shift_dir" && mv "$shift_dir.partial" "$shift_dir"',
    ].join('\n');
    await run('flock', [join(root, '.install.lock'), 'bash', '-c', script, 'install', dir, ...packages], { timeout: 20 * 60_000 });
    if (!(await ready())) throw new Error(`installing ${packages.join(' ')} left no ${dir}/.complete`);
  }
  return modules;
}

/** Writes a project's files (path → text) under `dir`, with `node_modules` linked to the runners' own. */
export async function writeProject(dir: string, files: Record<string, string>, modules: string | null): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  if (modules) await symlink(modules, join(dir, 'node_modules'));
}

/**
 * What a runner prints, standard output and error together as a gate step records them: a
 * failing run is what the tests are made of, so its exit code is returned, never thrown.
 */
export async function runnerOutput(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ output: string; exitCode: number }> {
  const script = '"$@" 2>&1';
  try {
    const { stdout } = await run('bash', ['-c', script, 'run', command, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', CI: '1', ...env },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 120_000,
    });
    return { output: stdout, exitCode: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; code?: number | string };
    if (typeof failed.code !== 'number') throw error;
    return { output: failed.stdout ?? '', exitCode: failed.code };
  }
}
