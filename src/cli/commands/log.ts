import type { Command } from 'commander';
import { formatTable, printJson } from '../output.js';
import { requireWorld, worldOption } from '../world-option.js';

export function define(program: Command): void {
  program
    .command('log')
    .description('the accepted history, newest first, with the evidence behind every commit (episode, task, attempt, agent, gate summary)')
    .addOption(worldOption())
    .option('--json', 'print an array of {commit, task, episode, attempt, agent, verified, date, subject}')
    .option('--limit <n>', 'show at most n commits', (v) => Number(v))
    .action(async (opts: { world?: string; json?: boolean; limit?: number }) => {
      const { WorldRepo } = await import('../../world/world-repo.js');
      const { readAcceptedHistory } = await import('../../world/accepted-history.js');
      const world = await WorldRepo.open(requireWorld(opts));
      const manifest = await world.manifestAt('HEAD');
      const history = (await readAcceptedHistory(world.path, manifest.branch)).slice(0, opts.limit ?? Infinity);
      if (opts.json) {
        return printJson(history.map((c) => ({ commit: c.commit, task: c.task, episode: c.episode, attempt: c.attempt, agent: c.agent, verified: c.verified, score: c.score, date: c.date, subject: c.subject })));
      }
      const scored = history.some((c) => c.score !== null);
      const rows = history.map((c) => [c.commit.slice(0, 12), c.date.slice(0, 19).replace('T', ' '), c.task ?? '(initial)', c.attempt ?? '', c.episode ?? '', ...(scored ? [c.score ?? ''] : []), c.verified ?? '']);
      process.stdout.write(`${formatTable(['commit', 'date', 'task', 'attempt', 'episode', ...(scored ? ['score'] : []), 'verified'], rows)}\n`);
    });
}
