import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { formatTable } from '../src/cli/output.js';
import { joinCluster } from '../src/cli/commands/run-distributed.js';
import { newEpisodeId } from '../src/episode/episode-job.js';
import { IntegrationStage } from '../src/integrate/integration-stage.js';
import { Lander } from '../src/integrate/lander.js';
import { runVerification } from '../src/integrate/run-verification.js';
import { MemoryVerificationQueue } from '../src/integrate/verification-queue.js';
import { Ledger } from '../src/world/ledger.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import { NoneSandbox } from '../src/sandbox/none-sandbox.js';
import { runWorld } from '../src/schedule/run-world.js';
import { git, gitValue } from '../src/world/git.js';
import { initWorld } from '../src/operations/init-world.js';
import type { WorldRepo } from '../src/world/world-repo.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { makeBenchRoot } from './lib/bench-world.js';

const BIN = fileURLToPath(new URL('../bin/genesis.js', import.meta.url));
const REDIS = process.env.GENESIS_BENCH_REDIS ?? 'redis://127.0.0.1:6379';
/** The agent waits as a remote model does, then makes its one-line change. */
const WAIT_SECONDS = 2;

/** A world of independent tasks whose agent spends WAIT_SECONDS waiting; gates run in bwrap. */
async function waitingWorld(root: string, name: string, tasks: number, parallelism: number): Promise<WorldRepo> {
  const seed = join(root, `${name}-seed`);
  await mkdir(join(seed, 'notes'), { recursive: true });
  await mkdir(join(seed, 'test'), { recursive: true });
  await writeFile(join(seed, 'notes', '.keep'), '');
  await writeFile(join(seed, 'test', 'smoke.test.js'), "const test = require('node:test');\ntest('ok', () => {});\n");
  await writeFile(join(seed, 'world.yaml'), stringify({
    name, goal: { outcome: 'measure throughput' },
    verify: { sandbox: 'bwrap', test: 'node --test test/', timeoutSec: 60 },
    protected: ['test/**', 'world.yaml'],
    agent: { kind: 'command', command: ['sh', '-c', `sleep ${WAIT_SECONDS}; echo "$GENESIS_EPISODE_ID" > "notes/$GENESIS_TASK_ID.txt"`], timeoutSec: 60 },
    retry: { maxAttempts: 1 }, parallelism,
    tasks: Array.from({ length: tasks }, (_, i) => ({ id: `t${i + 1}`, title: `note ${i + 1}`, paths: [`notes/t${i + 1}.txt`] })),
  }));
  const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
  return (await initWorld({ worldPath: join(root, `${name}.world`), from: seed, sandbox: async () => sandbox })).world;
}

async function inProcess(root: string, workers: number, tasks: number): Promise<number> {
  const world = await waitingWorld(root, `mem-${workers}`, tasks, workers);
  const t0 = performance.now();
  const summary = await runWorld({ world });
  return (summary.accepted / (performance.now() - t0)) * 60_000;
}

async function distributed(root: string, workers: number, tasks: number): Promise<number> {
  const world = await waitingWorld(root, `redis-${workers}`, tasks, workers);
  const env = { ...process.env, GENESIS_QUEUE_PREFIX: `bench-${randomUUID()}` };
  process.env.GENESIS_QUEUE_PREFIX = env.GENESIS_QUEUE_PREFIX;
  const children: ChildProcess[] = [];
  try {
    const ready = Array.from({ length: workers }, () => new Promise<void>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'worker', '--redis', REDIS, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('"ready"') && resolve());
    }));
    await Promise.all(ready);
    const cluster = await joinCluster(REDIS, world, `redis-${workers}`, world.path, () => undefined);
    const t0 = performance.now();
    try {
      const summary = await runWorld({ world, distributed: cluster.distributed });
      return (summary.accepted / (performance.now() - t0)) * 60_000;
    } finally {
      await cluster.leave();
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    delete process.env.GENESIS_QUEUE_PREFIX;
  }
}

/**
 * The integration stage's own rate, gates instant (no sandbox): changes on their own base land
 * by compare-and-swap at once; changes all made on one old base are each built on the one ahead,
 * verified on that tip and landed as verified.
 */
async function integratorRate(root: string, count: number): Promise<{ fastForward: number; replay: number }> {
  const world = await waitingWorld(root, 'integrator', 1, 1);
  const sandbox = new NoneSandbox();
  const ledger = new Ledger(world.path);
  const candidate = async (base: string, path: string) => {
    const env = { GIT_INDEX_FILE: `${world.path}/bench.index` };
    await git(['read-tree', base], { cwd: world.path, env });
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: `${path}\n` });
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { cwd: world.path, env });
    return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [base], 'c\n');
  };
  const passed = async (base: string, cand: string) => {
    const id = newEpisodeId();
    await ledger.write({
      version: 1, id, world: 'integrator', task: 't1', attempt: 1, agent: 'bench', base, candidate: cand, commit: null, status: 'running', outcome: null, reason: null,
      message: null, signature: null, startedAt: new Date().toISOString(), endedAt: null, phases: {}, changedFiles: [], usage: null, worker: 'bench',
      gate: { ok: true, sandbox: 'none', summary: 'bench', steps: [], durationMs: 0 },
    });
    return { id, task: 't1', candidate: cand, base };
  };
  const through = async (changes: Array<{ id: string; task: string; candidate: string; base: string }>) => {
    const head = await world.head('main');
    const verifications = new MemoryVerificationQueue((job) => runVerification(job, { world, sandbox, worker: 'bench' }), 4);
    let left = changes.length;
    let done: () => void = () => {};
    const all = new Promise<void>((resolve) => (done = resolve));
    const stage = new IntegrationStage({ world, ledger, lander: new Lander(world, ledger, 'main', head), verifications, slots: 4, head, worldName: 'integrator', onOutcome: async () => void (--left === 0 && done()) });
    void (async () => {
      while (left > 0) await stage.verified(await verifications.nextResult());
    })();
    const t0 = performance.now();
    for (const c of changes) await stage.join(c);
    await all;
    await verifications.close();
    return performance.now() - t0;
  };
  let ffTime = 0;
  for (let i = 0; i < count; i++) {
    const head = await world.head('main');
    ffTime += await through([await passed(head, await candidate(head, `notes/ff-${i}.txt`))]);
  }
  const base = await world.head('main');
  const changes = [];
  for (let i = 0; i < count; i++) changes.push(await passed(base, await candidate(base, `notes/t1-${i}.txt`)));
  const replayTime = await through(changes);
  return { fastForward: count / (ffTime / 1000), replay: count / (replayTime / 1000) };
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const { dir, cleanup } = await makeBenchRoot('scaling');
  try {
    const counts = ctx.quick ? [1, 2] : [1, 2, 4, 8];
    const rows: string[][] = [];
    for (const workers of counts) {
      const tasks = ctx.quick ? 4 : Math.max(8, workers * 3);
      const mem = await inProcess(dir, workers, tasks);
      const redis = await distributed(dir, workers, tasks);
      rows.push([String(workers), String(tasks), mem.toFixed(1), redis.toFixed(1), (60 / WAIT_SECONDS * workers).toFixed(0)]);
    }
    const rate = await integratorRate(dir, ctx.quick ? 10 : 50);
    const table = [
      formatTable(['workers', 'tasks', 'in-process: accepted/min', 'BullMQ + worker processes: accepted/min', 'ceiling (agent wait only)'], rows),
      '',
      formatTable(['integrator', 'accepted changes per second'], [['fast-forward (head still the base)', rate.fastForward.toFixed(1)], ['speculative: all made on one base, each built and verified on the one ahead (instant gate)', rate.replay.toFixed(1)]]),
    ].join('\n');
    return {
      title: 'Throughput: accepted changes per minute against workers, and the integrator\'s own rate',
      table,
      notes: [
        `Each episode's agent waits ${WAIT_SECONDS} s (as a remote model does), then writes one line; gates run node --test in bwrap.`,
        'In-process uses the embedded queue with parallelism = workers; BullMQ uses as many `genesis worker` processes, each concurrency 1, on the local Redis.',
        'The ceiling is what the agents\' waiting alone allows; the gap is the harness (workspace, gate, integration) sharing 2 cores.',
      ],
    };
  } finally {
    await cleanup();
  }
}
