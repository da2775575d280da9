import type { Command } from 'commander';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

export interface AmendCliOptions {
  world?: string;
  from: string;
  message: string;
  dryRun?: boolean;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json?: boolean;
}

export function define(program: Command): void {
  program
    .command('amend')
    .description(
      "a person's change to the world: --from's working tree (its .git ignored) becomes the next accepted tree, tests and world.yaml included, once it passes its own gate",
    )
    .addOption(worldOption())
    .requiredOption('--from <dir>', 'the working tree to land (for instance a clone of the world, edited)')
    .requiredOption('--message <text>', 'what was changed and why: the commit message and its Genesis-Amend trailer')
    .option('--dry-run', "print the diff and the gate's verdict, change nothing")
    .addOption(sandboxOption())
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nWaits while a genesis run of this world runs on this machine (a running integrator puts back any move it did not make).\nExit codes: 0 landed (or, with --dry-run, would land), 1 rejected by the gate or an error, 2 usage.',
    )
    .action(async (opts: AmendCliOptions) => {
      const { amendCommand } = await import('./action.js');
      process.exitCode = await amendCommand({ ...opts, world: requireWorld(opts) });
    });
}
