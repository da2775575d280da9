import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { distributedJobSchema, EPISODE_QUEUE, queuePrefix } from './distributed-job.js';
import { listWorkers, type WorkerInfo } from '../redis/worker-registry.js';
import { takerKey } from './job-consumer.js';

export interface ClusterStatus {
  queue: { waiting: number; active: number; delayed: number; completed: number; failed: number };
  workers: WorkerInfo[];
  /** `worker`: the worker that took the job (null before it noted itself); `lost`: that worker's heartbeat is gone, so the job waits to be taken again. */
  running: Array<{ episodeId: string; world: string; task: string; attempt: number; since: string; worker: string | null; lost: boolean }>;
  schedulers: Array<{ world: string; host: string; pid: number; since: string }>;
}

/** What `genesis status` shows, read from Redis alone. */
export async function readClusterStatus(redis: Redis): Promise<ClusterStatus> {
  const queue = new Queue(EPISODE_QUEUE, { connection: redis, prefix: queuePrefix() });
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    const active = await queue.getJobs(['active'], 0, 199);
    const workers = await listWorkers(redis);
    const live = new Set(workers.map((w) => w.id));
    const takers = active.length === 0 ? [] : await redis.mget(active.map((job) => takerKey(String(job.id))));
    const running = active.flatMap((job, i) => {
      const parsed = distributedJobSchema.safeParse(job.data);
      if (!parsed.success) return [];
      const { job: e } = parsed.data;
      return [
        {
          episodeId: e.episodeId,
          world: parsed.data.worldKey,
          task: e.task,
          attempt: e.attempt,
          since: new Date(job.processedOn ?? job.timestamp).toISOString(),
          worker: takers[i] ?? null,
          lost: takers[i] != null && !live.has(takers[i]!),
        },
      ];
    });
    return {
      queue: {
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        completed: counts.completed ?? 0,
        failed: counts.failed ?? 0,
      },
      workers,
      running,
      schedulers: await listSchedulers(redis),
    };
  } finally {
    await queue.close();
  }
}

/** Integrator locks: `genesis:{<world>}:integrator` holds `{ token, since, owner: { host, pid } }`. */
async function listSchedulers(redis: Redis): Promise<ClusterStatus['schedulers']> {
  const found: ClusterStatus['schedulers'] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', 'genesis:{*}:integrator', 'COUNT', 200);
    cursor = next;
    for (const key of keys) {
      const value = await redis.get(key);
      if (!value) continue;
      const parsed = JSON.parse(value) as { since?: number; owner?: { host?: string; pid?: number } };
      found.push({
        world: key.slice('genesis:{'.length, -'}:integrator'.length),
        host: parsed.owner?.host ?? '?',
        pid: parsed.owner?.pid ?? 0,
        since: new Date(parsed.since ?? 0).toISOString(),
      });
    }
  } while (cursor !== '0');
  return found;
}
