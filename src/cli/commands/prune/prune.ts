import type { Command } from 'commander';
import { GenesisError } from '../../../errors/genesis-error.js';
import { printJson } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

function days(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new GenesisError('invalid-option', `--keep-days ${value} is not a number of days`, { hint: 'pass a number ≥ 0, e.g. --keep-days 7' });
  return n;
}

export function define(program: Command): void {
  program
    .command('prune')
    .description(
      'drop the changes of episodes that did not land once older than ledger.keepRejectedDays (the ledger keeps each record and a cut diff), then git gc',
    )
    .addOption(worldOption())
    .option('--keep-days <days>', 'override ledger.keepRejectedDays of world.yaml', days)
    .option('--no-gc', 'rewrite the ledger refs only; leave the objects to the next git gc')
    .option('--json', 'print {pruned, bytesBefore, bytesAfter}')
    .action(async (opts: { world?: string; keepDays?: number; gc: boolean; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { pruneRejectedChanges } = await import('../../../ledger/prune.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const keepDays = opts.keepDays ?? (await world.manifestAt('HEAD')).ledger.keepRejectedDays;
      const report = await pruneRejectedChanges(world.path, { keepMs: keepDays * 86_400_000, gc: opts.gc });
      if (opts.json) return printJson(report);
      const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
      process.stdout.write(
        `pruned the changes of ${report.pruned.length} episode(s) older than ${keepDays} day(s); objects ${mb(report.bytesBefore)} -> ${mb(report.bytesAfter)}\n`,
      );
    });
}
