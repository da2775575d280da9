import type { Command } from 'commander';
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
    .action(async (ref: string, opts: { world?: string; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { ledgerOf } = await import('../../../ledger/git-ledger.js');
      const { resolveShowTarget, showCommit } = await import('./resolve.js');
      const { describeGateSteps } = await import('../../../gate/plan.js');
      const world = await LocalWorld.open(requireWorld(opts));
      const ledger = ledgerOf(world);
      const target = await resolveShowTarget(world, ledger, ref);
      if (target.kind === 'commit') return showCommit(world.path, target, Boolean(opts.json));
      const id = target.id;
      const record = (await ledger.read(id))!;
      const artifacts = await ledger.readArtifacts(id);
      // The hidden checks' output lives outside the ledger (agents can read the ledger's objects); a person may see it here.
      const { readHiddenLog } = await import('../../../ledger/hidden-logs.js');
      const hidden = [await readHiddenLog(world, id), await readHiddenLog(world, `${id}-replay`)].filter((t): t is string => t !== null);
      const hiddenLog = hidden.length > 0 ? hidden.join('\n') : undefined;
      if (opts.json) return printJson({ record, ...artifacts, ...(hiddenLog === undefined ? {} : { hiddenLog }) });
      const section = (title: string, text: string | undefined) =>
        `\n── ${title} ${'─'.repeat(Math.max(0, 60 - title.length))}\n${text?.trimEnd() || '(none)'}\n`;
      process.stdout.write(
        [
          `episode ${record.id}: task ${record.task}, attempt ${record.attempt}, ${record.outcome ?? record.status}${record.reason ? ` (${record.reason})` : ''}`,
          `  agent ${record.agent} on ${record.worker}; base ${record.base.slice(0, 12)}; candidate ${record.candidate?.slice(0, 12) ?? '-'}; commit ${record.commit?.slice(0, 12) ?? '-'}`,
          `  ${record.message ?? ''}`,
          ...(record.quarantine
            ? [`  unfinished work kept at ${record.quarantine} (git --git-dir <world> diff ${record.base.slice(0, 12)} ${record.quarantine})`]
            : []),
          `  phases: ${Object.entries(record.phases)
            .map(([k, v]) => `${k} ${v}ms`)
            .join(', ')}`,
          ...(record.gate ? [section(`gate steps (${record.gate.sandbox})`, describeGateSteps(record.gate.steps).join('\n'))] : []),
          section('prompt', artifacts.prompt),
          section('agent log', artifacts.agentLog),
          section('diff', artifacts.diff),
          section('gate log', artifacts.gateLog),
          ...(hiddenLog === undefined ? [] : [section('hidden checks (never shown to agents)', hiddenLog)]),
        ].join('\n'),
      );
    });
}
