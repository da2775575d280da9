import { Option, type Command } from 'commander';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import { wholeNumber } from '../../option-parsers.js';
import { formatCostUsd } from '../../../ledger/change-costs.js';
import { formatSeconds, formatTable, printJson, printText } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  program
    .command('episodes')
    .description('every episode of the world, accepted or not: task, attempt, outcome, reason, tokens, cost and timings')
    .addOption(worldOption())
    .option('--json', 'print an array of episode records (id, task, attempt, outcome, reason, commit, phases, gate, …)')
    .option('--task <id>', 'only the episodes of this task')
    .addOption(
      new Option('--outcome <outcome>', 'only the episodes with this outcome').choices(['accepted', 'rejected', 'failed', 'abandoned', 'outrun', 'running']),
    )
    .option('--limit <n>', 'only the newest n episodes', wholeNumber('--limit', 1))
    .action(async (opts: { world?: string; json?: boolean; task?: string; outcome?: string; limit?: number }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const episodes = (await ledgerOf(world).readAll())
        .filter(
          (e) => (!opts.task || e.task === opts.task) && (!opts.outcome || (opts.outcome === 'running' ? e.status === 'running' : e.outcome === opts.outcome)),
        )
        .slice(-(opts.limit ?? Infinity));
      if (opts.json) return printJson(episodes);
      printText(
        `${formatTable(['episode', 'task', 'attempt', 'outcome', 'reason', 'commit', 'agent', 'tokens', 'cost', 'agent time', 'gate', 'total'], episodes.map(row))}\n`,
      );
    });
}

function row(e: EpisodeRecord): Array<string | number> {
  const total = e.endedAt ? Date.parse(e.endedAt) - Date.parse(e.startedAt) : undefined;
  const u = e.usage;
  const tokens = u && (u.inputTokens !== null || u.outputTokens !== null) ? String((u.inputTokens ?? 0) + (u.outputTokens ?? 0)) : '';
  const cost = u?.costUsd === null || u?.costUsd === undefined ? '' : `$${formatCostUsd(u.costUsd)}`;
  const gate = e.phases.gate === undefined ? undefined : e.phases.gate + (e.phases['gate-on-base'] ?? 0);
  return [
    e.id,
    e.task,
    e.attempt,
    e.outcome ?? e.status,
    e.reason ?? '',
    e.commit?.slice(0, 12) ?? '',
    e.agent,
    tokens,
    cost,
    formatSeconds(e.phases.agent),
    formatSeconds(gate),
    formatSeconds(total),
  ];
}
