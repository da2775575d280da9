/**
 * Soak: a script world with 8 workers and at least 1,000 episodes on a real Redis (a private
 * redis-server) and a real sandbox (bubblewrap), then `genesis audit`; the memory of Redis and of
 * every Genesis process at start and end; then the world's ledger is grown to 10,000 episodes
 * (git fast-import) and `genesis episodes`, `log`, `stats` and `audit` are timed on it.
 *
 *   node --import tsx scripts/soak.ts [--tasks 250] [--failures 3] [--workers 8] [--synthetic 10000] [--seed 1] [--keep]
 *
 * Exit code: 0 when the run finished, every task landed and the audit found no violation.
 */
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readAcceptedHistory } from '../src/world/history/accepted-history.js';
import { GitLedger } from '../src/ledger/git-ledger.js';
import { startGenesis, stopAllGenesis, stopProcess, type GenesisProcess } from './fault-injection/genesis-process.js';
import { PrivateRedis } from './fault-injection/private-redis.js';
import { mib, processMemory } from './soak/process-memory.js';
import { createSoakWorld } from './soak/soak-world.js';
import { synthesizeLedger } from './soak/synthesize-ledger.js';
import { timeGenesis } from './soak/time-command.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '250' },
    failures: { type: 'string', default: '3' },
    workers: { type: 'string', default: '8' },
    synthetic: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    port: { type: 'string', default: '17900' },
    keep: { type: 'boolean', default: false },
  },
});
const workersWanted = Number(values.workers);
const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const state = await mkdtemp(join(tmpdir(), 'genesis-soak-'));
await mkdir(join(state, 'redis'));
const redis = new PrivateRedis(Number(values.port), join(state, 'redis'));
const out: string[] = [];
let ok = true;
const processes: GenesisProcess[] = [];
// Ctrl-C or a kill must not leave workers and Redis behind: they are this script's to stop.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping`);
    void stopAllGenesis()
      .then(() => redis.stop())
      .finally(() => process.exit(130));
  });
}

/** Resident memory of each process: scheduler first, then the workers. */
async function memoryOf(list: GenesisProcess[]): Promise<Array<{ rss: number; peak: number } | null>> {
  return Promise.all(list.map((p) => processMemory(p.child.pid!)));
}
const describeMemory = (m: Array<{ rss: number; peak: number } | null>) =>
  `scheduler ${m[0] ? mib(m[0].rss) : '-'}; workers ${m
    .slice(1)
    .map((w) => (w ? mib(w.rss) : '-'))
    .join(', ')}`;

try {
  await redis.start();
  const world = await createSoakWorld(state, {
    tasks: Number(values.tasks),
    failures: Number(values.failures),
    seed: Number(values.seed),
    parallelism: workersWanted,
  });
  say(`created a world of ${world.tasks.length} tasks; its recording makes ${world.expectedEpisodes} episodes`);
  const env = { GENESIS_QUEUE_PREFIX: `soak-${process.pid}` };
  const workers = Array.from({ length: workersWanted }, () =>
    startGenesis(['worker', '--redis', redis.url, '--json', '--concurrency', '1', '--cache-dir', join(state, 'cache')], env),
  );
  processes.push(...workers);
  await Promise.all(workers.map((w) => w.waitFor(/"type":"ready"/, 120_000)));
  const redisBefore = await redis.usedMemory();
  const t0 = Date.now();
  const scheduler = startGenesis(['run', '--world', world.path, '--redis', redis.url, '--json'], env);
  processes.unshift(scheduler);
  let ended = 0;
  scheduler.onLine((line) => void (line.includes('"type":"episode-end"') && ++ended));
  await scheduler.waitFor(/"type":"episode-end"/, 120_000);
  const memStart = await memoryOf([scheduler, ...workers]);
  const redisStart = await redis.usedMemory();
  // The scheduler exits when the world is done: its last sample is its memory at the end.
  let schedulerLast: { rss: number; peak: number } | null = memStart[0] ?? null;
  const sampler = setInterval(() => void processMemory(scheduler.child.pid!).then((m) => (schedulerLast = m ?? schedulerLast)), 1000);
  const series: string[] = [];
  const ticker = setInterval(() => {
    void Promise.all([redis.usedMemory().catch(() => NaN), processMemory(scheduler.child.pid!)]).then(([used, mem]) => {
      series.push(`${Math.round((Date.now() - t0) / 1000)}s ${ended} episodes redis ${mib(used)} scheduler ${mem ? mib(mem.rss) : '-'}`);
      say(series.at(-1)!);
    });
  }, 30_000);
  const code = await scheduler.exited;
  clearInterval(ticker);
  clearInterval(sampler);
  const runMs = Date.now() - t0;
  const memEnd = [schedulerLast, ...(await memoryOf(workers))];
  const redisEnd = await redis.usedMemory();
  await Promise.all(workers.map((w) => stopProcess(w)));
  const redisAfterWorkers = await redis.usedMemory();
  const episodes = await new GitLedger(world.path).readAll();
  const done = new Set((await readAcceptedHistory(world.path, 'main')).flatMap((c) => (c.task ? [c.task] : [])));
  const counts: Record<string, number> = {};
  for (const e of episodes) counts[e.outcome ?? e.status] = (counts[e.outcome ?? e.status] ?? 0) + 1;
  const byOutcome = Object.entries(counts);
  if (code !== 0 || done.size !== world.tasks.length) ok = false;
  out.push(
    `soak run: ${episodes.length} episodes (${byOutcome.map(([k, n]) => `${k} ${n}`).join(', ')}), ${done.size}/${world.tasks.length} tasks done, ${workersWanted} workers, bwrap, exit ${code}, ${(runMs / 1000).toFixed(0)}s (${(episodes.length / (runMs / 1000)).toFixed(1)} episodes/s)`,
    `redis used_memory: ${mib(redisBefore)} before the run, ${mib(redisStart)} after the first episode, ${mib(redisEnd)} at the end, ${mib(redisAfterWorkers)} after the workers left`,
    `RSS after the first episode: ${describeMemory(memStart)}`,
    `RSS at the end (the scheduler's last sample before it exited): ${describeMemory(memEnd)}`,
    `peak RSS (VmHWM): ${describeMemory(memEnd.map((m) => (m ? { rss: m.peak, peak: m.peak } : null)))}`,
    ...series.map((s) => `  sample ${s}`),
  );
  say('auditing the world');
  const audit = await timeGenesis(['audit', '--world', world.path, '--jobs', '4']);
  if (audit.code !== 0) ok = false;
  out.push(`genesis audit (every one of ${done.size + 1} commits verified again, 4 at a time): exit ${audit.code} in ${(audit.ms / 1000).toFixed(1)}s`);

  const big = join(state, 'big.world');
  await cp(world.path, big, { recursive: true });
  const extra = Math.max(0, Number(values.synthetic) - episodes.length);
  say(`adding ${extra} synthetic episodes`);
  const ts = Date.now();
  await synthesizeLedger(big, { count: extra, tasks: world.tasks, world: 'soak', base: (await readAcceptedHistory(big, 'main')).at(-1)!.commit, seed: 2 });
  out.push(`ledger grown to ${episodes.length + extra} episodes with git fast-import in ${((Date.now() - ts) / 1000).toFixed(1)}s`);
  for (const args of [
    ['episodes'],
    ['episodes', '--json'],
    ['log'],
    ['log', '--json'],
    ['stats'],
    ['stats', '--json'],
    ['audit', '--sample', '0'],
    ['audit', '--sample', '20'],
  ]) {
    const timed = await timeGenesis([...args, '--world', big]);
    out.push(
      `  genesis ${args.join(' ')} on ${episodes.length + extra} episodes: ${(timed.ms / 1000).toFixed(2)}s (exit ${timed.code}, ${(timed.stdoutBytes / 1024).toFixed(0)} KiB out)`,
    );
    if (timed.code !== 0) ok = false;
  }
} catch (error) {
  ok = false;
  out.push(`soak failed: ${(error as Error).stack ?? String(error)}`);
} finally {
  for (const p of processes) await stopProcess(p, 5000).catch(() => undefined);
  await redis.stop().catch(() => undefined);
  if (!values.keep) await rm(state, { recursive: true, force: true }).catch(() => undefined);
  else out.push(`kept: ${state}`);
}
process.stdout.write(`${out.join('\n')}\n`);
process.exitCode = ok ? 0 : 1;
