import { withCliName } from '../../invocation.js';
import { hostname, userInfo } from 'node:os';
import { GenesisError } from '../../../errors/genesis-error.js';
import { join } from 'node:path';
import { amendmentBase, amendWorld, type AmendResult } from '../../../operations/amend-world.js';
import { outcomeResult } from '../../../operations/carry-out-steering.js';
import { steerWorld } from '../../../operations/steer-world.js';
import { LocalWorld } from '../../../world/local-world.js';
import { EXIT } from '../../exit-codes.js';
import { cliSteerOptions } from '../../world-option.js';
import type { AmendCliOptions } from './amend.js';

export async function amendCommand(opts: AmendCliOptions & { world: string }): Promise<number> {
  const world = await LocalWorld.open(opts.world);
  const steer = await cliSteerOptions(world, opts, 'the amendment');
  const by = `${userInfo().username}@${hostname()}`;
  let result: AmendResult;
  try {
    if (opts.dryRun) {
      const head = await world.head((await world.manifestAt('HEAD')).branch);
      result = await amendWorld(
        world,
        { from: opts.from, base: await amendmentBase(world, opts.from, head), message: opts.message, by, dryRun: true, force: Boolean(opts.force) },
        steer.sandboxFor,
      );
    } else {
      // Read before anything can move the branch: the base is what the person's tree was made on, and what landed after it is merged in.
      const head = await world.head((await world.manifestAt('HEAD')).branch);
      const base = (await amendmentBase(world, opts.from, head)) ?? head;
      const tree = await world.writeTreeFromDir(opts.from, join(world.scratchDir, `amend-${process.pid}.index`));
      const request = { kind: 'amend' as const, by, tree, base, message: opts.message, source: opts.from, force: Boolean(opts.force) };
      result = outcomeResult(await steerWorld(world, request, steer), 'amend');
    }
  } finally {
    steer.dispose();
  }
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (opts.json) {
    const { verdict } = result;
    process.stdout.write(
      `${JSON.stringify({ head: result.head, tree: result.tree, commit: result.commit, dryRun: Boolean(opts.dryRun), ok: verdict.ok, warnings: result.warnings, stale: result.stale, verified: verdict.record.summary, reason: verdict.ok ? null : verdict.reason, message: verdict.ok ? null : verdict.message, tasks: result.tasks, diff: result.diff }, null, 2)}\n`,
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
