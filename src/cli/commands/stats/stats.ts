import { Option, type Command } from 'commander';
import { printJson } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

interface StatsOptions {
  world?: string;
  json: boolean;
}

/** Adds `genesis stats`: what a world's ledger measures about its agents, beside the reliability model. */
export function define(program: Command): void {
  program
    .command('stats')
    .description(
      'measure a world from its ledger: acceptance per attempt, why episodes were rejected, what retries recovered, the per-episode success p and the horizons it implies, time and cost per accepted change, what each task spent (episodes, tokens, cost, agent and gate time, time to landing), and the METR-style fit when tasks carry humanMinutes',
    )
    .addOption(worldOption())
    .addOption(
      new Option(
        '--json',
        'print JSON: {world, counts, rejectedByReason, acceptanceByAttempt, retryRecovery, deterministicFraction, episodeSuccess, horizons, perAcceptedChange, humanMinutesFit, prediction, spend: {tasks, changes}, races: {races, decided, byAgent: [{agent, model, raced, won}]}, verifier} (spend: episodes, tokens, costUsd, agentMs, gateMs and toLandingMs per task and per accepted change)',
      ).default(false),
    )
    .action(async (opts: StatsOptions) => {
      const { readStatsInput } = await import('./input.js');
      const { computeLedgerStats } = await import('../../../reliability/index.js');
      const { renderStats, toStatsJson } = await import('./report.js');
      const input = await readStatsInput(requireWorld(opts));
      const { manifest } = input;
      const left = manifest.tasks.length - input.done.size;
      const stats = computeLedgerStats(input.episodes, { remaining: { tasks: left, attempts: manifest.retry.maxAttempts } });
      const report = {
        world: {
          name: manifest.name,
          path: input.path,
          branch: manifest.branch,
          head: input.head,
          tasks: manifest.tasks.length,
          tasksDone: input.done.size,
          running: input.running,
          maxAttempts: manifest.retry.maxAttempts,
        },
        stats,
        spend: input.spend,
        races: input.races,
        verifier: input.calibration,
      };
      if (opts.json) return printJson(toStatsJson(report));
      process.stdout.write(`${renderStats(report)}\n`);
    });
}
