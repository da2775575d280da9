import { InvalidArgumentError, type Command } from 'commander';
import { redisOption } from '../../redis-option.js';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

export interface CalibrateCliOptions {
  world?: string;
  commits: number;
  mutants: number;
  seed: number;
  /** Absent: as many as the world verifies at once (integration.slots, else parallelism). */
  jobs?: number;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  /** Send the gates to the `genesis worker` processes of this Redis instead of running them here. */
  redis?: string;
  json?: boolean;
  quiet?: boolean;
}

function count(name: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}`);
    return n;
  };
}

/** Adds `genesis calibrate`: measures the gate's false-rejection rate f and recall d on the world's own project. */
export function define(program: Command): void {
  program
    .command('calibrate')
    .description(
      "measure how fairly the gate judges this project: replay the adopted history's last commits through it (false rejections f, each with its cause and what to change in world.yaml) and gate mutants of the head (recall d); both are kept with the world for genesis model and stats",
    )
    .addOption(worldOption())
    .option('--commits <n>', 'replay the newest n first-parent commits of the adopted history (0: none)', count('--commits', 0), 20)
    .option('--mutants <m>', "gate m mutants of the head's sources, on lines its tests execute (0: none)", count('--mutants', 0), 0)
    .option('--seed <n>', 'seed of the choice of mutants', count('--seed', 0), 1)
    .option(
      '--jobs <n>',
      'gates to run at once, here or in flight on the workers (default: as many as the world verifies at once, its integration.slots or parallelism)',
      count('--jobs', 1),
    )
    .addOption(sandboxOption())
    .addOption(
      redisOption(
        'run the gates in parallel on the genesis worker processes of this Redis instead of in this process: needs a worker alive, and the world on storage the workers share at the same path (a world behind a git URL is not supported)',
      ),
    )
    .option(
      '--json',
      'print the report as JSON: {world, head, falseRejection: {rate, low, high, count, of, causes, flaky, msPerCommit, replays}, recall: {rate, low, high, count, of, sites, byLanguage, survivors, …}, recallUnmeasured, durationMs}',
    )
    .option('--quiet', 'no progress lines on stderr')
    .addHelpText(
      'after',
      `
With --redis, each gate is a job for the workers (start them with genesis worker --redis <url>), and
the report is the one a calibration in this process makes. The gates run in a scratch world under
the world's directory, which the workers open by its path: the world must be on storage every
worker shares at the same path (a world behind a git URL is not supported for calibration on
workers). Workers gate in the sandbox world.yaml names (verify.sandbox); --sandbox then applies
only to the coverage run that picks the mutants, here.`,
    )
    .action(async (opts: CalibrateCliOptions) => {
      const { runCalibrate } = await import('./action.js');
      await runCalibrate(requireWorld(opts), opts);
    });
}
