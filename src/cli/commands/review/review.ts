import type { Command } from 'commander';
import { requireWorld, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  const review = program
    .command('review')
    .description('decide on changes that passed their gate and wait for a person (tasks with review: true, or review: all): list, approve, reject');
  review
    .command('ls')
    .description('list the changes waiting for review: episode, task, attempt, files, gate summary')
    .addOption(worldOption())
    .option('--json', 'print them as JSON')
    .action(async (opts: { world?: string; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { listReviews } = await import('../../../operations/review-change.js');
      const { withCliName } = await import('../../invocation.js');
      const world = requireWorld(opts);
      const reviews = await listReviews(await LocalWorld.open(world));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(reviews, null, 2)}\n`);
        return;
      }
      if (reviews.length === 0) {
        process.stdout.write('no change waits for review\n');
        return;
      }
      const { printText } = await import('../../output.js');
      for (const r of reviews) {
        const state = r.decided ? `${r.decided.decision === 'approve' ? 'approved' : 'rejected'}, the next step of a run carries it out` : 'waiting';
        printText(`${r.id}  ${r.task} attempt ${r.attempt}  ${state}\n  files: ${r.changedFiles.join(', ') || '-'}\n  gate: ${r.gate ?? '-'}\n`);
        // The world is named as this command found it, so the line runs as printed from anywhere.
        printText(withCliName(`  see the change: genesis show ${r.id} --diff --world ${shellWord(world)}\n`));
      }
      process.stdout.write(withCliName('decide with genesis review approve|reject <episode> [--note …]\n'));
    });
  for (const decision of ['approve', 'reject'] as const) {
    review
      .command(decision)
      .description(
        decision === 'approve'
          ? 'approve a change waiting for review: the run in progress (or the next) lands it through the integration queue, verified again on the accepted head if it moved'
          : "reject a change waiting for review: its episode is closed as rejected (review-rejected) and the task is tried again, the note in the next attempt's prompt",
      )
      .argument('<episode>', 'the episode id (or a unique prefix) genesis review ls shows')
      .addOption(worldOption())
      .option('--note <text>', decision === 'approve' ? 'why, for the record' : "what is wrong, for the next attempt's prompt")
      .option('--json', 'print the decision as JSON')
      .action(async (episode: string, opts: { world?: string; note?: string; json?: boolean }) => {
        const { LocalWorld } = await import('../../../world/local-world.js');
        const { decideReview } = await import('../../../operations/review-change.js');
        const { userInfo, hostname } = await import('node:os');
        const { withCliName } = await import('../../invocation.js');
        const worldPath = requireWorld(opts);
        const world = await LocalWorld.open(worldPath);
        const decided = await decideReview(world, { episode, decision, note: opts.note ?? null, by: `cli ${userInfo().username}@${hostname()}` });
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(decided, null, 2)}\n`);
          return;
        }
        const what = decision === 'approve' ? 'approved: it lands' : 'rejected: its task is tried again';
        process.stdout.write(
          withCliName(`episode ${decided.episode} ${what} at the next step of the run in progress, or with genesis run --world ${worldPath}\n`),
        );
      });
  }
}

/** A path as one shell word: as it is when it holds nothing a shell reads, else in single quotes. */
function shellWord(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}
