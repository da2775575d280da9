import type { Command } from 'commander';
import { redisOption } from '../../redis-option.js';

export function define(program: Command): void {
  program
    .command('status')
    .description('the distributed queue at a glance: jobs waiting and running, workers alive and what they run, which worlds have a scheduler')
    .addOption(redisOption('Redis holding the queue').default('redis://127.0.0.1:6379'))
    .option('--json', 'print {queue, workers, running, schedulers} as JSON')
    .option('--world <path>', "also show this world's integration queue: what is verified on top of what, and what waits")
    .action(async (opts: { redis: string; json?: boolean; world?: string }) => {
      if (opts.world) {
        const { LocalWorld } = await import('../../../world/local-world.js');
        const { readQueueSnapshot, formatQueueSnapshot } = await import('../../../integrate/queue-snapshot.js');
        const { readWorldHold, describeWorldHold } = await import('../../../schedule/run/world-hold.js');
        const scratch = (await LocalWorld.open(opts.world)).scratchDir;
        const [snapshot, hold] = await Promise.all([readQueueSnapshot(scratch), readWorldHold(scratch)]);
        if (opts.json) return void process.stdout.write(`${JSON.stringify({ integration: snapshot, hold })}\n`);
        return void process.stdout.write(`${hold ? `the world is ${describeWorldHold(hold)}\n` : ''}${formatQueueSnapshot(snapshot)}\n`);
      }
      const { readClusterStatus } = await import('../../../queue/bullmq/cluster-status.js');
      const { connectRedis } = await import('../../../queue/redis/connection.js');
      const { printJson, formatTable } = await import('../../output.js');
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
                ['episode', 'world', 'task', 'attempt', 'since'],
                status.running.map((r) => [r.episodeId, r.world, r.task, r.attempt, r.since]),
              ),
          '',
          status.schedulers.length === 0
            ? 'schedulers: none'
            : formatTable(
                ['world', 'host', 'pid', 'since'],
                status.schedulers.map((s) => [s.world, s.host, s.pid, s.since]),
              ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        redis.disconnect();
      }
    });
}
