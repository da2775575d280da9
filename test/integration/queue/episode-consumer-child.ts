// A BullMQ episode consumer in a process of its own, for tests that kill it mid-job.
// Usage: GENESIS_QUEUE_PREFIX=<prefix> node --import tsx episode-consumer-child.ts <redis-url> <lock-ms> <stalled-ms> [freeze]
// Prints {"event":"ready"} once it consumes, then {"event":"started","episodeId":…} for each job it
// takes; its handler never returns, so the job is left to whoever outlives this process. With
// `freeze`, the handler holds the event loop for good (as a catastrophic regular expression
// would), so the process lives on and renews no lock.
import { consumeEpisodes, ResultQueues } from '../../../src/queue/bullmq/job-consumer.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';

const [url = '', lockMs = '', stalledMs = '', mode = ''] = process.argv.slice(2);
const redis = await connectRedis(url);
consumeEpisodes({ redis, concurrency: 1, lockDurationMs: Number(lockMs), stalledIntervalMs: Number(stalledMs), results: new ResultQueues(redis) }, (data) => {
  console.log(JSON.stringify({ event: 'started', episodeId: data.job.episodeId }));
  // Writes to a pipe are synchronous on Linux: the line is out before the loop starts.
  if (mode === 'freeze') for (;;);
  return new Promise(() => undefined);
});
console.log(JSON.stringify({ event: 'ready' }));
setInterval(() => undefined, 60_000);
