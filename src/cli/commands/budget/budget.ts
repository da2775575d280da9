import type { Command } from 'commander';
import { GenesisError } from '../../../errors/genesis-error.js';
import { formatTable, printJson } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

function amount(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new GenesisError('invalid-option', `${flag} ${value} is not a positive number`, { hint: `e.g. ${flag} 20` });
    return n;
  };
}

interface LiftOptions {
  world?: string;
  reason: string;
  costUsd?: number;
  tokens?: number;
  episodes?: number;
  hours?: number;
  json?: boolean;
}

export function define(program: Command): void {
  const budget = program
    .command('budget')
    .description("the world's budgets (goal.stop): what world.yaml sets, what a person lifted them by and why, and what is in force")
    .addOption(worldOption())
    .option('--json', 'print {budgets, lifts: [{at, by, reason, raise}], inForce, standing: [{name, set, lifted, limit, used, unit, spent}]}')
    .action(async (opts: { world?: string; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const { liftedBudgets } = await import('../../../ledger/budget-lifts.js');
      const { budgetStanding } = await import('../../../schedule/budget-standing.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const stop = (await world.manifestAt('HEAD')).goal.stop;
      const ledger = ledgerOf(world);
      const [lifts, summaries] = await Promise.all([ledger.budgetLifts(), ledger.readSummaries()]);
      const inForce = liftedBudgets(stop, lifts);
      // The standing is the dashboard's too (/api/overview budgets): one derivation, so they cannot disagree.
      const standing = budgetStanding(stop, lifts, summaries, new Date());
      if (opts.json) return printJson({ budgets: stop, lifts, inForce, standing });
      const rows = standing.map((b) => [b.name, b.set, b.lifted === 0 ? '-' : `+${b.lifted}`, b.limit, `${b.used} ${b.unit}${b.spent ? ' (spent)' : ''}`]);
      process.stdout.write(
        rows.length === 0 ? 'no budget set (goal.stop in world.yaml)\n' : `${formatTable(['budget', 'world.yaml', 'lifted', 'in force', 'used'], rows)}\n`,
      );
      for (const l of lifts) {
        const raised = Object.entries(l.raise)
          .map(([k, n]) => `${k} +${n}`)
          .join(', ');
        process.stdout.write(`lifted ${l.at.slice(0, 19).replace('T', ' ')} by ${l.by}: ${raised}: ${l.reason}\n`);
      }
    });
  budget
    .command('lift')
    .description('let the world spend more than world.yaml allows, without amending it: each amount is added to its budget; the reason is recorded and shown')
    .addOption(worldOption())
    .requiredOption('--reason <text>', 'why the budget is lifted (shown by genesis budget)')
    .option('--cost-usd <n>', 'raise maxCostUsd by n dollars', amount('--cost-usd'))
    .option('--tokens <n>', 'raise maxTokens by n tokens', amount('--tokens'))
    .option('--episodes <n>', 'raise maxEpisodes by n episodes', amount('--episodes'))
    .option('--hours <n>', 'raise maxHours by n hours', amount('--hours'))
    .option('--json', 'print the lift recorded: {at, by, reason, raise}')
    .action(async (own: LiftOptions, command: Command) => {
      // --world may sit before `lift`, where `genesis budget` takes it.
      const opts = command.optsWithGlobals<LiftOptions>();
      const { hostname, userInfo } = await import('node:os');
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const raise = {
        ...(opts.costUsd === undefined ? {} : { maxCostUsd: opts.costUsd }),
        ...(opts.tokens === undefined ? {} : { maxTokens: opts.tokens }),
        ...(opts.episodes === undefined ? {} : { maxEpisodes: opts.episodes }),
        ...(opts.hours === undefined ? {} : { maxHours: opts.hours }),
      };
      const lift = await ledgerOf(world).addBudgetLift({ by: `${userInfo().username}@${hostname()}`, reason: opts.reason, raise });
      if (own.json ?? opts.json) return printJson(lift);
      process.stdout.write(
        `lifted ${Object.entries(lift.raise)
          .map(([k, n]) => `${k} +${n}`)
          .join(', ')}: ${lift.reason}\n`,
      );
    });
}
