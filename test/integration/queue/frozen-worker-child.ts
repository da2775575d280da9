// A worker of one job kind in a process of its own, whose handler holds the event loop for good (as
// a catastrophic regular expression would): the process lives on and renews no lock. It takes jobs
// with the settings every `genesis worker` takes every kind with (workerSettings).
// Usage: GENESIS_QUEUE_PREFIX=<prefix> node --import tsx frozen-worker-child.ts <redis-url> <lock-ms> <stalled-ms> <queue>
// Prints {"event":"ready"} once it consumes, then {"event":"started","jobId":…} for the job it takes.
import { Worker } from 'bullmq';
import { workerSettings } from '../../../src/queue/bullmq/job-consumer.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';

const [url = '', lockMs = '', stalledMs = '', queue = ''] = process.argv.slice(2);
const redis = await connectRedis(url);
const settings = { redis, concurrency: 1, lockDurationMs: Number(lockMs), stalledIntervalMs: Number(stalledMs) };
const worker = new Worker(
  queue,
  async (job) => {
    // Writes to a pipe are synchronous on Linux: the line is out before the loop starts.
    console.log(JSON.stringify({ event: 'started', jobId: job.id }));
    for (;;);
  },
  workerSettings(redis.duplicate(), settings),
);
await worker.waitUntilReady();
console.log(JSON.stringify({ event: 'ready' }));
