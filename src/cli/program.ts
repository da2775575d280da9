import { Command } from 'commander';

/**
 * Each command module exports `define(program)`, which declares the command's options and loads
 * its implementation lazily inside the action, so `genesis --help` stays fast.
 */
type CommandModule = { define(program: Command): void };

// Static paths, so any bundler or test runner can follow them; the order is the one --help lists.
const COMMAND_MODULES: ReadonlyArray<() => Promise<CommandModule>> = [
  () => import('./commands/init/init.js'),
  () => import('./commands/run/run.js'),
  () => import('./commands/demo/demo.js'),
  () => import('./commands/log/log.js'),
  () => import('./commands/episodes/episodes.js'),
  () => import('./commands/show/show.js'),
  () => import('./commands/model/model.js'),
  () => import('./commands/worker/worker.js'),
  () => import('./commands/task/task.js'),
  () => import('./commands/review/review.js'),
  () => import('./commands/amend/amend.js'),
  () => import('./commands/status/status.js'),
  () => import('./commands/budget/budget.js'),
  () => import('./commands/stats/stats.js'),
  () => import('./commands/serve/serve.js'),
  () => import('./commands/doctor/doctor.js'),
  () => import('./commands/deps/deps.js'),
  () => import('./commands/audit/audit.js'),
  () => import('./commands/calibrate/calibrate.js'),
  () => import('./commands/prune/prune.js'),
];

/**
 * The `genesis` program with every command declared and nothing run: what `main` parses, and what
 * `npm run docs` renders docs/reference/cli.md from, so the page is the commands' own help.
 */
export async function createProgram(): Promise<Command> {
  const program = new Command('genesis')
    .description(
      'Run software projects built by coding agents: disposable episodes, a gate that verifies every change, and an accepted history that only ever holds passing trees.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const load of COMMAND_MODULES) (await load()).define(program);
  return program;
}
