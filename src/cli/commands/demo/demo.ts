import type { Command } from 'commander';
import { sandboxOption } from '../../world-option.js';

interface DemoOptions {
  world: string;
  force?: boolean;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json?: boolean;
}

export function define(program: Command): void {
  program
    .command('demo')
    .description(
      'build the example world worlds/calc end to end on this machine with a recorded agent, wrong turns included, so you can watch the gate at work',
    )
    .option('--world <path>', 'where to create the demo world', 'demo.world')
    .option('--force', 'replace an existing demo world at that path')
    .addOption(sandboxOption())
    .option('--json', 'print JSON events and the summary')
    .action(async (opts: DemoOptions) => {
      const { runDemo } = await import('./action.js');
      process.exitCode = await runDemo(opts);
    });
}
