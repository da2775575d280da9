import { withCliName } from '../../invocation.js';
import { hostname, userInfo } from 'node:os';
import { GenesisError } from '../../../errors/genesis-error.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { amendWorld, type AmendResult } from '../../../operations/amend-world.js';
import { waitForRunLock } from '../../../world/wait-for-run-lock.js';
import { LocalWorld } from '../../../world/local-world.js';
import { EXIT } from '../../exit-codes.js';
import { resolveSandboxChoice } from '../../sandbox-choice.js';
import type { AmendCliOptions } from './amend.js';

export async function amendCommand(opts: AmendCliOptions & { world: string }): Promise<number> {
  const world = await LocalWorld.open(opts.world);
  const atInit = await world.initSandbox();
  const sandboxFor = async (m: { verify: { sandbox: 'auto' | 'docker' | 'bwrap' | 'none'; image: string } }) => {
    const { choice, why } = resolveSandboxChoice({ flag: opts.sandbox, manifest: m.verify.sandbox, atInit });
    const sandbox = await createSandbox(choice, { image: m.verify.image });
    process.stderr.write(`sandbox: ${sandbox.kind} (${why})\n`);
    return sandbox;
  };
  const lock = opts.dryRun
    ? null
    : await waitForRunLock(world.scratchDir, {
        onWait: (held) =>
          process.stderr.write(`waiting: ${held}; the amendment lands when it stops (stop it with Ctrl-C there, or press Ctrl-C here to give up)\n`),
      });
  let result: AmendResult;
  try {
    result = await amendWorld(
      world,
      { from: opts.from, message: opts.message, by: `${userInfo().username}@${hostname()}`, dryRun: Boolean(opts.dryRun) },
      sandboxFor,
    );
  } finally {
    await lock?.release();
  }
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (opts.json) {
    const { verdict } = result;
    process.stdout.write(
      `${JSON.stringify({ head: result.head, tree: result.tree, commit: result.commit, dryRun: Boolean(opts.dryRun), ok: verdict.ok, warnings: result.warnings, verified: verdict.record.summary, reason: verdict.ok ? null : verdict.reason, message: verdict.ok ? null : verdict.message, tasks: result.tasks, diff: result.diff }, null, 2)}\n`,
    );
    return verdict.ok ? EXIT.ok : EXIT.error;
  }
  if (opts.dryRun) process.stdout.write(`${result.diff.trimEnd()}\n\n`);
  printVerdict(result, Boolean(opts.dryRun));
  if (!result.verdict.ok && !opts.dryRun) {
    throw new GenesisError(
      'amend-rejected',
      `the amended tree does not pass its own gate: ${result.verdict.reason}: ${result.verdict.message}\n${result.verdict.log.slice(-1500)}`,
      {
        hint: 'the accepted history is unchanged; fix the tree and amend again (--dry-run shows the verdict without landing)',
      },
    );
  }
  return result.verdict.ok ? EXIT.ok : EXIT.error;
}

function printVerdict(result: AmendResult, dryRun: boolean): void {
  const { verdict, tasks } = result;
  const lines: string[] = [];
  if (verdict.ok)
    lines.push(
      dryRun
        ? `gate: passes; ${withCliName('genesis amend')} without --dry-run would land it on ${result.head.slice(0, 12)}`
        : `amended: ${result.head.slice(0, 12)} → ${result.commit!.slice(0, 12)}`,
    );
  else lines.push(`gate: rejects (${verdict.reason}: ${verdict.message})${dryRun ? '; nothing would land' : ''}`);
  lines.push(`  verified: ${verdict.record.summary}`);
  if (tasks.added.length) lines.push(`  new tasks: ${tasks.added.join(', ')} (their checks run once they are done)`);
  if (tasks.removed.length) lines.push(`  removed tasks: ${tasks.removed.join(', ')}`);
  if (!verdict.ok && dryRun) lines.push(verdict.log.slice(-1500));
  process.stdout.write(`${lines.join('\n')}\n`);
}
