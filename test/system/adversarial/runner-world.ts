import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { attackRoot, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * What a world needs to know of one test runner to put attacks on it: where the protected tests
 * and the modules they import live, and how a test file is run. Each task's protected test wants
 * the module its agent writes to export `v` equal to the task's id.
 */
export interface Runner {
  /** The command that runs one test file or a directory of them. */
  command(target: string): string;
  /** The directory of the protected tests. */
  dir: string;
  /** The test the world's own test step runs: it passes whatever the tasks write, so each task is judged by its check. */
  base: string;
  /** The module a task's agent writes. */
  module(id: string): string;
  testFile(id: string): string;
  test(id: string): string;
  /** Where the JUnit report is read from; without one, the gate reads the runner's printed output. */
  report?: string;
  timeoutSec: number;
  /** A runner from npm: a package.json that wants it, installed by the gate's deps step before any test. */
  npm?: { name: string; version: string; esm?: boolean };
  /** What else the tests need in the tree, the base test among them unless the world already has it. */
  files?: Record<string, string>;
}

/**
 * Runs a world whose tasks' agents write the attacks, each its own module, all at once; the
 * honest one among them must land. In a ratchet world the tasks write one module `m` instead, in
 * the order given, each after the one before, judged by the score alone.
 */
export async function runnerWorld(opts: {
  name: string;
  runner: Runner;
  /** Task id → the module its agent writes. */
  attacks: Record<string, string>;
  ratchet?: boolean;
  /** Hidden tests, run by the runner from where the gate puts them. */
  holdout?: Record<string, string>;
  /** Fields of the manifest's verify over the ones the runner gives. */
  verify?: Record<string, unknown>;
  /** Fields every task has beside the ones the runner gives. */
  task?: Record<string, unknown>;
  parallelism?: number;
  /** Files over the ones the runner gives. */
  files?: Record<string, string>;
}): Promise<AttackedWorld> {
  const { root } = await attackRoot();
  const { runner, attacks, ratchet } = opts;
  const ids = Object.keys(attacks);
  const module = (id: string) => runner.module(ratchet ? 'm' : id);
  const tested = ratchet ? ['m'] : ids;
  let holdout: Record<string, unknown> | undefined;
  if (opts.holdout) {
    await mkdir(join(root, 'holdout'));
    for (const [name, content] of Object.entries(opts.holdout)) await writeFile(join(root, 'holdout', name), content);
    holdout = { dir: join(root, 'holdout'), command: runner.command('.genesis-holdout/') };
  }
  const manifest = {
    name: opts.name,
    goal: { outcome: ratchet ? 'the module is right' : 'the honest module exists' },
    verify: {
      sandbox: 'bwrap',
      timeoutSec: runner.timeoutSec,
      mode: ratchet ? 'ratchet' : undefined,
      test: runner.command(runner.base),
      report: runner.report && { junit: runner.report },
      holdout,
      deps: runner.npm && { files: ['package.json'], install: 'npm install --ignore-scripts --no-audit --no-fund', paths: ['node_modules'] },
      ...opts.verify,
    },
    protected: [`${runner.dir}/**`, 'world.yaml', '.genesis/**', ...(runner.npm ? ['package.json'] : [])],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 10 },
    retry: { maxAttempts: 1 },
    parallelism: opts.parallelism ?? (ratchet ? 1 : ids.length),
    tasks: ids.map((id, i) =>
      ratchet
        ? { id, title: id, paths: [module(id)], ...(i > 0 && { dependsOn: [ids[i - 1]] }) }
        : { id, title: id, paths: [module(id)], check: runner.command(runner.testFile(id)), ...opts.task },
    ),
  };
  const files: Record<string, string> = {
    ...(runner.npm && packageFiles(runner.npm)),
    ...runner.files,
    ...Object.fromEntries(tested.map((id) => [runner.testFile(id), runner.test(id)])),
    '.genesis/recording.yaml': stringify({ tasks: Object.fromEntries(ids.map((id) => [id, [{ write: { [module(id)]: attacks[id] } }]])) }),
    ...opts.files,
  };
  return runAttackedWorld({ root, manifest, files, sandbox: 'bwrap' });
}

function packageFiles({ name, version, esm }: NonNullable<Runner['npm']>): Record<string, string> {
  return {
    'package.json': `{ "name": "w", "private": true,${esm ? ' "type": "module",' : ''} "devDependencies": { "${name}": "${version}" } }\n`,
    // What the deps step installs is no part of a commit.
    '.gitignore': 'node_modules\n',
  };
}
