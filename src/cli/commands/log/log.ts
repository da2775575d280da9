import type { Command } from 'commander';
import { wholeNumber } from '../../option-parsers.js';
import type { ChangeCost } from '../../../ledger/change-costs.js';
import { formatSeconds, formatTable, printJson, printText, spendCells, terminalWidth } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  program
    .command('log')
    .description(
      'the accepted history, newest first, with the evidence behind every commit: what made it (task and attempt, init, amend, task add), what it took, and the verdict it landed on (sandbox, image, test counts); cut to the terminal width, --json has every field',
    )
    .addOption(worldOption())
    .option(
      '--json',
      'print an array of {commit, made, task, episode, attempt, agent, verified, verdict, score, cost, amend, date, subject, spend}; verdict: the gate summary the commit landed on; spend: what the change took from the ledger (episodes, tokens, costUsd, agentMs, gateMs, toLandingMs), null for a commit no episode made',
    )
    .option('--limit <n>', 'show at most n commits', wholeNumber('--limit', 1))
    .action(async (opts: { world?: string; json?: boolean; limit?: number }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { commitOrigins } = await import('../../../world/history/commit-origin.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const { measureChangeCosts } = await import('../../../ledger/change-costs.js');
      const { briefGateSummary } = await import('../../../gate/plan.js');
      const { landedVerdict } = await import('./verdict.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const manifest = await world.manifestAt('HEAD');
      const whole = await world.acceptedHistory(manifest.branch);
      const history = whole.slice(0, opts.limit ?? Infinity);
      const origins = commitOrigins(whole, await world.adoption());
      const records = await ledgerOf(world).readAll();
      // What each change took: every episode of its task since the task's previous change, from the ledger.
      const spent = new Map(measureChangeCosts(records).changes.map((c) => [c.commit, c]));
      const spendOf = (commit: string): Omit<ChangeCost, 'task' | 'episode' | 'commit' | 'attempt'> | null => {
        const c = spent.get(commit);
        if (!c) return null;
        const { task: _t, episode: _e, commit: _c, attempt: _a, ...rest } = c;
        return rest;
      };
      // A change gated on its place in the queue carries its score and its verdict in the record its trailer names.
      const byId = new Map(records.map((r) => [r.id, r]));
      const ledger = { read: async (id: string) => byId.get(id) ?? null };
      const [scores, verdicts] = await Promise.all([
        Promise.all(history.map((c) => world.scoreOf(c))),
        Promise.all(history.map((c) => landedVerdict(world, ledger, c))),
      ]);
      if (opts.json) {
        return printJson(
          history.map((c, i) => ({
            commit: c.commit,
            made: origins[i]!,
            task: c.task,
            episode: c.episode,
            attempt: c.attempt,
            agent: c.agent,
            verified: c.verified,
            verdict: verdicts[i],
            score: scores[i],
            cost: c.cost ?? null,
            amend: c.amend ?? null,
            reopen: c.reopen ?? null,
            date: c.date,
            subject: c.subject,
            spend: spendOf(c.commit),
          })),
        );
      }
      // Scores mean something only where the gate holds them (ratchet worlds); elsewhere the column is noise.
      const scored = manifest.verify.mode === 'ratchet';
      // A commit no episode made is labelled by what made it: (init), (adopt), (history), (reopen) …, (amend) …, (task add) or (unattributed).
      const label = (c: (typeof history)[number], i: number) => {
        const made = origins[i]!;
        return made === 'episode'
          ? (c.task ?? '')
          : made === 'reopen'
            ? `(reopen) ${c.reopen ?? c.subject}`
            : made === 'amend'
              ? `(amend) ${c.subject}`
              : made === 'task-add'
                ? `(task add) ${c.subject.replace('world: add task ', '')}`
                : `(${made})`;
      };
      // A row has room for the verdict, not for everything: the episode's id, the year and the
      // agent's and gate's times are in --json (and `genesis show <commit>`); tokens and cost only
      // where some agent reported them.
      const reported = history.some((c) => {
        const s = spent.get(c.commit);
        return s !== undefined && (s.tokens !== null || s.costUsd !== null);
      });
      const rows = history.map((c, i) => [
        c.commit.slice(0, 12),
        c.date.slice(5, 16).replace('T', ' '),
        label(c, i),
        c.attempt ?? '',
        ...(scored ? [scores[i] ?? ''] : []),
        ...changeCells(spent.get(c.commit), reported),
        verdicts[i] ? briefGateSummary(verdicts[i]!, { time: false }) : '',
      ]);
      const headers = [
        'commit',
        'date',
        'made by',
        'attempt',
        ...(scored ? ['score'] : []),
        'episodes',
        ...(reported ? ['tokens', 'cost'] : []),
        'to land',
        'verified',
      ];
      printText(`${formatTable(headers, rows, { width: terminalWidth(), shrink: [2, headers.length - 1] })}\n`);
    });
}

/** Episodes (with tokens and cost when `reported`) of the change, and its time to land. */
function changeCells(c: ChangeCost | undefined, reported: boolean): string[] {
  const [episodes, tokens, cost] = c ? spendCells(c) : ['', '', ''];
  return [episodes!, ...(reported ? [tokens!, cost!] : []), c ? formatSeconds(c.toLandingMs) : ''];
}
