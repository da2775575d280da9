import type { Command } from 'commander';
import { redisOption } from '../../redis-option.js';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

interface RunCliOptions {
  world?: string;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json?: boolean;
  redis?: string;
  remote?: string;
  cacheDir?: string;
  pastEvidence?: boolean;
}

export function define(program: Command): void {
  program
    .command('run')
    .description(
      "run episodes on the ready tasks until all are done, the goal's evidence passes, a budget is spent, or what is left is blocked; run again to resume",
    )
    .addOption(worldOption())
    .addOption(sandboxOption())
    .addOption(redisOption())
    .option('--remote <location>', 'where workers find the world (a git URL or a path on shared storage); default: --world')
    .option('--cache-dir <dir>', 'where the mirror of a world given as a git URL is kept (default: ~/.cache/genesis/worlds)')
    .option('--past-evidence', "run the pending tasks even though the goal's evidence passes (tasks added or retried after it passed)")
    .option('--json', 'print one JSON event per line, and the summary last')
    .addHelpText('after', '\nExit codes: 0 done or evidence met, 1 error, 2 usage, 3 blocked, 4 budget spent, 5 interrupted, 6 agent broken (circuit open).')
    .action(async (opts: RunCliOptions) => {
      const { runCommand } = await import('./action.js');
      process.exitCode = await runCommand({
        world: requireWorld(opts),
        sandbox: opts.sandbox,
        json: Boolean(opts.json),
        redis: opts.redis,
        remote: opts.remote,
        cacheDir: opts.cacheDir,
        pastEvidence: Boolean(opts.pastEvidence),
      });
    });
}
