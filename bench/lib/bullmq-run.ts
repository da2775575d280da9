import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { joinCluster } from '../../src/cli/commands/run/distributed.js';
import type { RunEvent, RunSummary } from '../../src/schedule/run/ports/events.js';
import { runWorld } from '../../src/schedule/run/run-world.js';
import { composeClusterRun } from '../../src/compose/cluster-run.js';
import type { WorldRepo } from '../../src/world/world-repo.js';

const BIN = fileURLToPath(new URL('../../bin/genesis.js', import.meta.url));
export const BENCH_REDIS = process.env.GENESIS_BENCH_REDIS ?? 'redis://127.0.0.1:6379';

/** One line a `genesis worker --json` printed (see WorkerEvent), with the worker's own clock (`at`, epoch ms). */
export interface WorkerLine {
  type: string;
  episodeId?: string;
  task?: string;
  phase?: string;
  verdict?: string;
  at: number;
  worker: number;
}

/**
 * `genesis run` over BullMQ as a user runs it on one machine: `workers` `genesis worker` processes
 * of concurrency 1 on the local Redis (a queue prefix of their own), then the scheduler in this
 * process. Each worker's JSON lines go to `onWorkerLine`; the run's events to `onEvent`.
 */
export async function runOverBullmq(
  world: WorldRepo,
  name: string,
  workers: number,
  onEvent: (event: RunEvent) => void,
  onWorkerLine: (line: WorkerLine) => void = () => undefined,
  /** Worlds run first on the same workers, unmeasured (workers that have run an episode before). */
  warmUp: ReadonlyArray<{ world: WorldRepo; name: string }> = [],
): Promise<RunSummary> {
  const env = { ...process.env, GENESIS_QUEUE_PREFIX: `bench-${randomUUID()}` };
  process.env.GENESIS_QUEUE_PREFIX = env.GENESIS_QUEUE_PREFIX;
  const children: ChildProcess[] = [];
  try {
    const ready = Array.from(
      { length: workers },
      (_, worker) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, [BIN, 'worker', '--redis', BENCH_REDIS, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
          children.push(child);
          child.on('exit', (code) => reject(new Error(`a genesis worker exited (${code}) before it was ready`)));
          let partial = '';
          child.stdout!.on('data', (chunk: Buffer) => {
            const parts = (partial + chunk.toString()).split('\n');
            partial = parts.pop()!;
            for (const text of parts) {
              const line = parseLine(text, worker);
              if (line?.type === 'ready') resolve();
              else if (line) onWorkerLine(line);
            }
          });
        }),
    );
    await Promise.all(ready);
    for (const w of warmUp) {
      const cluster = await joinCluster(BENCH_REDIS, w.world, w.name, w.world.path, () => undefined);
      try {
        await runWorld({ world: w.world, ...(await composeClusterRun(w.world, cluster.distributed)) });
      } finally {
        await cluster.leave();
      }
    }
    const cluster = await joinCluster(BENCH_REDIS, world, name, world.path, () => undefined);
    try {
      return await runWorld({ world, ...(await composeClusterRun(world, cluster.distributed)), onEvent });
    } finally {
      await cluster.leave();
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    delete process.env.GENESIS_QUEUE_PREFIX;
  }
}

function parseLine(text: string, worker: number): WorkerLine | null {
  try {
    const value = JSON.parse(text) as Partial<WorkerLine>;
    return typeof value.type === 'string' ? ({ at: Date.now(), ...value, worker } as WorkerLine) : null;
  } catch {
    return null;
  }
}
