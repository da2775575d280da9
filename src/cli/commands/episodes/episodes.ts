import { Option, type Command } from 'commander';
import type { EpisodeRecord } from '../../../ledger/episode-record.js';
import { wholeNumber } from '../../option-parsers.js';
import { formatTable, printJson } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  program
    .command('episodes')
    .description('every episode of the world, accepted or not: task, attempt, outcome, reason, timings')
    .addOption(worldOption())
    .option('--json', 'print an array of episode records (id, task, attempt, outcome, reason, commit, phases, gate, …)')
    .option('--task <id>', 'only the episodes of this task')
    .addOption(new Option('--outcome <outcome>', 'only the episodes with this outcome').choices(['accepted', 'rejected', 'failed', 'abandoned', 'running']))
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
      process.stdout.write(`${formatTable(['episode', 'task', 'attempt', 'outcome', 'reason', 'commit', 'agent', 'gate', 'total'], episodes.map(row))}\n`);
    });
}

function row(e: EpisodeRecord): Array<string | number> {
  const seconds = (ms: number | undefined) => (ms === undefined ? '' : `${(ms / 1000).toFixed(1)}s`);
  const total = e.endedAt ? Date.parse(e.endedAt) - Date.parse(e.startedAt) : undefined;
  return [e.id, e.task, e.attempt, e.outcome ?? e.status, e.reason ?? '', e.commit?.slice(0, 12) ?? '', e.agent, seconds(e.phases.gate), seconds(total)];
}
