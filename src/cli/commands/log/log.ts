import type { Command } from 'commander';
import { wholeNumber } from '../../option-parsers.js';
import type { ChangeCost } from '../../../ledger/change-costs.js';
import { formatSeconds, formatTable, printJson, SPEND_HEADERS, spendCells } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  program
    .command('log')
    .description('the accepted history, newest first, with the evidence behind every commit (episode, task, attempt, agent, gate summary)')
    .addOption(worldOption())
    .option(
      '--json',
      'print an array of {commit, made, task, episode, attempt, agent, verified, score, cost, amend, date, subject, spend}; spend: what the change took from the ledger (episodes, tokens, costUsd, agentMs, gateMs, toLandingMs), null for a commit no episode made',
    )
    .option('--limit <n>', 'show at most n commits', wholeNumber('--limit', 1))
    .action(async (opts: { world?: string; json?: boolean; limit?: number }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { commitOrigin } = await import('../../../world/history/commit-origin.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const { measureChangeCosts } = await import('../../../ledger/change-costs.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const manifest = await world.manifestAt('HEAD');
      const history = (await world.acceptedHistory(manifest.branch)).slice(0, opts.limit ?? Infinity);
      // What each change took: every episode of its task since the task's previous change, from the ledger.
      const spent = new Map(measureChangeCosts(await ledgerOf(world).readAll()).changes.map((c) => [c.commit, c]));
      const spendOf = (commit: string): Omit<ChangeCost, 'task' | 'episode' | 'commit' | 'attempt'> | null => {
        const c = spent.get(commit);
        if (!c) return null;
        const { task: _t, episode: _e, commit: _c, attempt: _a, ...rest } = c;
        return rest;
      };
      // A change gated on its place in the queue carries its score in the verification its trailer names.
      const scores = await Promise.all(history.map((c) => world.scoreOf(c)));
      if (opts.json) {
        return printJson(
          history.map((c, i) => ({
            commit: c.commit,
            made: commitOrigin(c),
            task: c.task,
            episode: c.episode,
            attempt: c.attempt,
            agent: c.agent,
            verified: c.verified,
            score: scores[i],
            cost: c.cost ?? null,
            amend: c.amend ?? null,
            date: c.date,
            subject: c.subject,
            spend: spendOf(c.commit),
          })),
        );
      }
      // Scores mean something only where the gate holds them (ratchet worlds); elsewhere the column is noise.
      const scored = manifest.verify.mode === 'ratchet';
      // A commit no episode made is labelled by what made it: (init), (amend: …), (task add) or (unattributed).
      const label = (c: (typeof history)[number]) => {
        const made = commitOrigin(c);
        return made === 'episode'
          ? (c.task ?? '')
          : made === 'amend'
            ? `(amend) ${c.subject}`
            : made === 'task-add'
              ? `(task add) ${c.subject.replace('world: add task ', '')}`
              : `(${made})`;
      };
      const rows = history.map((c, i) => [
        c.commit.slice(0, 12),
        c.date.slice(0, 19).replace('T', ' '),
        label(c),
        c.attempt ?? '',
        c.episode ?? '',
        ...(scored ? [scores[i] ?? ''] : []),
        ...changeCells(spent.get(c.commit)),
        c.verified ?? '',
      ]);
      process.stdout.write(
        `${formatTable(['commit', 'date', 'task', 'attempt', 'episode', ...(scored ? ['score'] : []), ...SPEND_HEADERS, 'to land', 'verified'], rows)}\n`,
      );
    });
}

function changeCells(c: ChangeCost | undefined): string[] {
  return c ? [...spendCells(c), formatSeconds(c.toLandingMs)] : ['', '', '', '', '', ''];
}
