import { InvalidArgumentError, type Command } from 'commander';
import { redisOption } from '../../redis-option.js';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';
import { AUDIT_EXIT } from './exit.js';

/** The options of `genesis audit` as commander parses them. */
export interface AuditCliOptions {
  world?: string;
  sample?: number;
  seed: number;
  jobs: number;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  redis?: string;
  json?: boolean;
}

function count(name: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}`);
    return n;
  };
}

/** Adds `genesis audit`: checks a world's invariants and verifies its accepted trees again. */
export function define(program: Command): void {
  program
    .command('audit')
    .description(
      "check a world's invariants: a linear accepted history brought only by episodes, each commit matching a final, accepted ledger record with a passing gate, every episode closed, and every accepted tree (or a seeded sample) passing its gate again in a fresh sandbox",
    )
    .addOption(worldOption())
    .option('--sample <n>', 'verify again only a seeded random sample of n accepted commits (0: none, structural checks only)', count('--sample', 0))
    .option('--seed <n>', 'seed of the sample', count('--seed', 0), 1)
    .option('--jobs <n>', 'gates to run at once while verifying again', count('--jobs', 1), 1)
    .addOption(sandboxOption())
    .addOption(redisOption('Redis of a distributed run, to tell whether one holds the world now'))
    .option(
      '--json',
      'print the report as JSON: {world, branch, head, commits, adoption, episodes, running, reverified, findings, violations, warnings, durationMs}',
    )
    .addHelpText(
      'after',
      `\nExit codes: ${AUDIT_EXIT.clean} no violation (warnings allowed), 1 error (not a world, no sandbox), 2 usage, ${AUDIT_EXIT.violations} violations found.`,
    )
    .action(async (opts: AuditCliOptions) => {
      const { runAudit } = await import('./action.js');
      process.exitCode = await runAudit(requireWorld(opts), opts);
    });
}
