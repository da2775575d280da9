import { Option, type Command } from 'commander';
import { redisOption } from '../../redis-option.js';

export interface WorkerCliOptions {
  redis: string;
  concurrency: number;
  cacheDir?: string;
  json?: boolean;
  healthFile?: string;
  refuseUnconfined?: boolean;
}

export function define(program: Command): void {
  program
    .command('worker')
    .description(
      'take episode jobs of any world from Redis and run them (workspace, agent, gate); start as many as you like, on any machine that reaches Redis and the worlds',
    )
    .addOption(redisOption('Redis holding the queue').default('redis://127.0.0.1:6379'))
    .addOption(new Option('--concurrency <n>', 'episodes this worker runs at once').default(1).argParser((v) => Number.parseInt(v, 10)))
    .option('--cache-dir <dir>', 'where mirrors of worlds behind git URLs are kept (default: ~/.cache/genesis/worlds)')
    .option('--json', 'print one JSON line per event')
    .option(
      '--health-file <path>',
      'keep a file for probes: its first line is ready, unconfined (a sandbox probe failed) or stopping; rewritten every 10 s while the worker lives',
    )
    .option('--refuse-unconfined', 'exit with an error instead of taking jobs when the gate or the agent sandbox fails its probe (worker-unconfined)')
    .addHelpText('after', '\nSIGTERM or Ctrl-C: finish the running episodes, then exit. A second one: hand them back to the queue at once.')
    .action(async (opts: WorkerCliOptions) => {
      const { runWorkerCommand } = await import('./action.js');
      process.exitCode = await runWorkerCommand(opts);
    });
}
