import type { Command } from 'commander';
import { requireWorld, sandboxOption, steeringTimeoutOption, worldOption } from '../../world-option.js';

export interface AmendCliOptions {
  world?: string;
  from: string;
  message: string;
  dryRun?: boolean;
  force?: boolean;
  timeout?: number;
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
    .option(
      '--force',
      'land the tree as it is even when it was made on an older head: undoes what landed since, on purpose (without it, such a tree is merged onto the head)',
    )
    .addOption(sandboxOption())
    .addOption(steeringTimeoutOption())
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nWhile a genesis run of this world runs on this machine, its scheduler takes the amendment and lands it between two landings; the command waits for it (--timeout).\nA tree made on an older head (a clone not pulled since) is merged three-way onto the head, keeping what landed since, or refused on a conflict.\nExit codes: 0 landed (or, with --dry-run, would land), 1 rejected by the gate or an error, 2 usage.',
    )
    .action(async (opts: AmendCliOptions) => {
      const { amendCommand } = await import('./action.js');
      process.exitCode = await amendCommand({ ...opts, world: requireWorld(opts) });
    });
}
