import type { Command } from 'commander';
import { redisOption } from '../../redis-option.js';

export function define(program: Command): void {
  program
    .command('status')
    .description('the distributed queue at a glance: jobs waiting and running, workers alive and what they run, which worlds have a scheduler')
    .addOption(redisOption('Redis holding the queue').default('redis://127.0.0.1:6379'))
    .option('--json', 'print {queue, workers, running, schedulers} as JSON; with --world, {world, head, counts, tasks, budgets, integration, hold, waits}')
    .option(
      '--world <path>',
      "show this world instead: each task's state, attempts made and left, and why it waits or is blocked; then its integration queue (what is verified on top of what)",
    )
    .action(async (opts: { redis: string; json?: boolean; world?: string }) => {
      if (opts.world) {
        const { LocalWorld } = await import('../../../world/local-world.js');
        const { readQueueSnapshot, formatQueueSnapshot } = await import('../../../integrate/queue-snapshot.js');
        const { readWorldHold, describeWorldHold } = await import('../../../schedule/run/carry-out/world-hold.js');
        const { WorldSnapshots } = await import('../../../server/projections/world-snapshot.js');
        const { buildTaskBoard } = await import('../../../server/projections/task-board.js');
        const { probeLocalWorker } = await import('../../../server/projections/worker-liveness.js');
        const { formatTaskBoard } = await import('./world-status.js');
        const { printText, terminalWidth } = await import('../../output.js');
        const { withCliName } = await import('../../invocation.js');
        const world = await LocalWorld.open(opts.world);
        const scratch = world.scratchDir;
        const { readLiveWaits } = await import('../../../schedule/live-waits.js');
        const { findRunHolder } = await import('../../../audit/run-holder.js');
        const [snapshot, queue, hold, waiting, runner] = await Promise.all([
          new WorldSnapshots(world).current(),
          readQueueSnapshot(scratch),
          readWorldHold(scratch),
          readLiveWaits(scratch),
          findRunHolder(world),
        ]);
        // What a run that died left in the file is not a wait.
        const waits = runner === null ? [] : waiting.map(({ task, what, ms }) => ({ task, what, ms }));
        const board = buildTaskBoard(snapshot, (w) => probeLocalWorker(w));
        const { budgetStanding } = await import('../../../schedule/budget-standing.js');
        const budgets = budgetStanding(snapshot.manifest.goal.stop, snapshot.lifts, snapshot.records, new Date());
        if (opts.json) {
          const tasks = board.tasks;
          const out = {
            world: snapshot.path,
            branch: snapshot.manifest.branch,
            head: snapshot.head,
            maxAttempts: board.maxAttempts,
            counts: board.counts,
            tasks,
            budgets,
          };
          return void process.stdout.write(`${JSON.stringify({ ...out, integration: queue, hold, waits })}\n`);
        }
        const top = `world ${snapshot.manifest.name} at ${snapshot.manifest.branch} ${snapshot.head.slice(0, 12)}`;
        const held = hold ? `the world is ${describeWorldHold(hold)}\n` : '';
        const budgetLine =
          budgets.length === 0
            ? ''
            : `budgets: ${budgets.map((b) => `${b.name} ${b.used} of ${b.limit}${b.lifted > 0 ? ` (lifted ${b.lifted})` : ''}${b.spent ? ', spent' : ''}`).join(' · ')}\n`;
        const waitLines = waits.map((w) => `waiting: ${w.task} waits for ${w.what} (${Math.round(w.ms / 1000)}s so far)\n`).join('');
        return void printText(
          withCliName(`${top}\n${held}${budgetLine}${waitLines}${formatTaskBoard(board, terminalWidth())}\n\n${formatQueueSnapshot(queue)}\n`),
        );
      }
      const { readClusterStatus } = await import('../../../queue/bullmq/cluster-status.js');
      const { connectRedis } = await import('../../../queue/redis/connection.js');
      const { printJson, printText, formatTable } = await import('../../output.js');
      const { withCliName } = await import('../../invocation.js');
      const redis = await connectRedis(opts.redis, { name: 'genesis-status' });
      try {
        const status = await readClusterStatus(redis);
        if (opts.json) return printJson(status);
        const q = status.queue;
        const lines = [
          `queue: ${q.waiting} waiting · ${q.active} running · ${q.delayed} delayed · ${q.completed} completed · ${q.failed} failed (kept for inspection)`,
          '',
          status.workers.length === 0
            ? withCliName('workers: none alive (start one with: genesis worker --redis <url>)')
            : formatTable(
                ['worker', 'host', 'pid', 'concurrency', 'episodes', 'last seen'],
                status.workers.map((w) => [
                  w.id,
                  w.host,
                  w.pid,
                  w.concurrency,
                  w.episodes.join(' ') || '-',
                  `${Math.round((Date.now() - w.lastSeen) / 1000)}s ago`,
                ]),
              ),
          '',
          status.running.length === 0
            ? 'running episodes: none'
            : formatTable(
                ['episode', 'world', 'task', 'attempt', 'since', 'worker'],
                status.running.map((r) => [
                  r.episodeId,
                  r.world,
                  r.task,
                  r.attempt,
                  r.since,
                  // A killed worker's job stays active until the queue finds it stalled: say so, rather than show it running.
                  r.worker === null ? '-' : r.lost ? `${r.worker} (lost: no heartbeat; taken again once found stalled)` : r.worker,
                ]),
              ),
          '',
          status.schedulers.length === 0
            ? 'schedulers: none'
            : formatTable(
                ['world', 'host', 'pid', 'since'],
                status.schedulers.map((s) => [s.world, s.host, s.pid, s.since]),
              ),
        ];
        printText(`${lines.join('\n')}\n`);
      } finally {
        redis.disconnect();
      }
    });
}
