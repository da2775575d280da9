import type { Command } from 'commander';
import { markControlLines, showControls } from '../../../ledger/terminal-text.js';
import { printJson } from '../../output.js';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  program
    .command('show')
    .description(
      'one episode in full: record, prompt, agent log, diff and gate log (by episode id or a unique prefix of one, or by an accepted commit); a commit no episode made (the first, an amendment, a task add) shows its trailers and diff',
    )
    .argument('<episode-or-commit>', 'an episode id or its prefix, or a commit of the accepted history (hash, prefix, HEAD, main~1)')
    .addOption(worldOption())
    .option('--json', 'print the record and the logs as one JSON object')
    .option('--diff', 'print only the change (the diff), as a reviewer reads it')
    .option('--conversation', 'print what the agent sent its model and what it answered, call by call, as the model gateway recorded it')
    .action(async (ref: string, opts: { world?: string; json?: boolean; diff?: boolean; conversation?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const { resolveShowTarget, showCommit } = await import('./resolve.js');
      const { describeGateSteps } = await import('../../../gate/plan.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const ledger = ledgerOf(world);
      const target = await resolveShowTarget(world, ledger, ref);
      if (target.kind === 'commit') return showCommit(world.path, target, { json: Boolean(opts.json), diffOnly: Boolean(opts.diff) });
      const id = target.id;
      const record = (await ledger.read(id))!;
      const artifacts = await ledger.readArtifacts(id);
      // The hidden checks' output lives outside the ledger (agents can read the ledger's objects); a person may see it here.
      const { readEpisodeHiddenLogs } = await import('../../../ledger/hidden-logs.js');
      const hiddenLog = (await readEpisodeHiddenLogs(world, id)) ?? undefined;
      if (opts.json) return printJson({ record, ...artifacts, ...(hiddenLog === undefined ? {} : { hiddenLog }) });
      // Every line an agent or the code under test wrote is shown with its control characters
      // visible and, when it held any, marked: a cursor movement in a diff must not hide a line.
      if (opts.diff) return void process.stdout.write(`${markControlLines(artifacts.diff?.trimEnd() || '(no diff)')}\n`);
      const { formatConversation } = await import('./conversation.js');
      const conversation = formatConversation(artifacts.transcript, opts.conversation === true);
      const section = (title: string, text: string | undefined) =>
        `\n── ${title} ${'─'.repeat(Math.max(0, 60 - title.length))}\n${markControlLines(text?.trimEnd() || '(none)')}\n`;
      const header = [
        `episode ${record.id}: task ${record.task}, attempt ${record.attempt}, ${record.outcome ?? record.status}${record.reason ? ` (${record.reason})` : ''}`,
        `  agent ${record.agent} on ${record.worker}; base ${record.base.slice(0, 12)}; candidate ${record.candidate?.slice(0, 12) ?? '-'}; commit ${record.commit?.slice(0, 12) ?? '-'}`,
        `  ${record.message ?? ''}`,
      ];
      process.stdout.write(
        [
          showControls(header.join('\n')),
          ...(record.quarantine
            ? [`  unfinished work kept at ${record.quarantine} (git --git-dir <world> diff ${record.base.slice(0, 12)} ${record.quarantine})`]
            : []),
          ...(record.usageSource === 'wire' && record.usage
            ? [
                `  usage, measured at the model gateway over ${record.modelCalls ?? '?'} call(s): ${record.usage.inputTokens ?? '?'} tokens in, ${record.usage.outputTokens ?? '?'} out, ${record.usage.costUsd === null ? 'cost unknown (no price)' : `$${record.usage.costUsd}`}${record.usageReported ? `; the agent reported ${record.usageReported.inputTokens ?? '?'} in, ${record.usageReported.outputTokens ?? '?'} out` : ''}`,
              ]
            : []),
          ...(record.usageProblems?.length ? [`  usage problems: ${record.usageProblems.join('; ')}`] : []),
          `  phases: ${Object.entries(record.phases)
            .map(([k, v]) => `${k} ${v}ms`)
            .join(', ')}`,
          ...(record.gate ? [section(`gate steps (${record.gate.sandbox})`, describeGateSteps(record.gate.steps).join('\n'))] : []),
          section('prompt', artifacts.prompt),
          section('agent log', artifacts.agentLog),
          ...(conversation === null
            ? []
            : [section(opts.conversation ? 'model calls' : 'model calls (--conversation prints what was sent and answered)', conversation)]),
          section('diff', artifacts.diff),
          section('gate log', artifacts.gateLog),
          ...(hiddenLog === undefined ? [] : [section('hidden checks (never shown to agents)', hiddenLog)]),
        ].join('\n'),
      );
    });
}
