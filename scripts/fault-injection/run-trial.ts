import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { worldKeyOf } from '../../src/queue/bullmq/distributed-job.js';
import { connectRedis } from '../../src/queue/redis/connection.js';
import { RedisPathLeases } from '../../src/queue/redis/path-leases.js';
import { readAcceptedHistory } from '../../src/world/history/accepted-history.js';
import type { FaultPlan } from './faults.js';
import { startGenesis, stopProcess, within, type GenesisProcess } from './genesis-process.js';
import type { PrivateDocker } from './private-docker.js';
import type { PrivateRedis } from './private-redis.js';
import { injectFault } from './inject-fault.js';
import { createTrialWorld } from './trial-world.js';

export interface TrialResult {
  trial: number;
  plan: FaultPlan;
  /** What was done, in words, with when (ms after the first episode started). */
  injected: string;
  /** Whether the fault met what it is meant to hit (see Injected); a trial where it did not proves nothing. */
  fired: boolean;
  /** Times `genesis run` was started again after it ended without finishing (lock waits excluded). */
  restarts: number;
  /** Why the scheduler ended before the world was done, each time it did. */
  stops: string[];
  violations: string[];
  warnings: string[];
  episodes: number;
  durationMs: number;
}

export interface TrialServices {
  redis: PrivateRedis;
  docker: PrivateDocker | null;
  /** Keep the world's directory for a look afterwards. */
  keep: boolean;
}

const FAST = { GENESIS_LOCK_MS: '2000', GENESIS_STALLED_MS: '1000', GENESIS_RECONCILE_MS: '1000', GENESIS_INTEGRATOR_TTL_MS: '3000' };
const TASKS = 6;

/**
 * One trial: a fresh world, a scheduler and three workers on the private Redis, one fault at the
 * planned moment, then `genesis run` again until the world is done, and `genesis audit`.
 */
export async function runTrial(trial: number, plan: FaultPlan, services: TrialServices, seed: number): Promise<TrialResult> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), `genesis-fault-${trial}-`));
  const docker = plan.kind === 'restart-docker' ? services.docker : null;
  const env: Record<string, string> = {
    ...FAST,
    GENESIS_QUEUE_PREFIX: `fault-${seed}-${trial}-${process.pid}`,
    ...(docker ? { DOCKER_HOST: docker.host } : {}),
  };
  const world = await createTrialWorld(dir, { tasks: TASKS, sleepMs: plan.sleepMs, sandbox: docker ? 'docker' : 'bwrap', parallelism: 3 });
  const url = services.redis.url;
  const processes: Array<{ name: string; p: GenesisProcess }> = [];
  const keep = (name: string, p: GenesisProcess) => {
    processes.push({ name: `${name}-${processes.filter((s) => s.name.startsWith(name)).length + 1}`, p });
    return p;
  };
  const startWorker = () => keep('worker', startGenesis(['worker', '--redis', url, '--json', '--concurrency', '1', '--cache-dir', join(dir, 'cache')], env));
  const startScheduler = () => keep('scheduler', startGenesis(['run', '--world', world.path, '--redis', url, '--json'], env));
  const workers: GenesisProcess[] = [startWorker(), startWorker(), startWorker()];
  const result: TrialResult = { trial, plan, injected: '', fired: false, restarts: 0, stops: [], violations: [], warnings: [], episodes: 0, durationMs: 0 };
  try {
    await Promise.all(
      workers.map((w) => w.waitFor(/"type":"ready"/).catch((e: Error) => Promise.reject(new Error(`${e.message}; worker stderr: ${w.stderr().slice(-500)}`)))),
    );
    const scheduler = { current: startScheduler() };
    await scheduler.current.waitFor(/"type":"episode-start"/, 60_000);
    const t0 = Date.now();
    const at = () => `${Date.now() - t0} ms`;
    // These wait for their own moment (a result, a gate on a reserved tip); the others strike after the planned delay.
    await sleep(['kill-integrator', 'kill-lander', 'kill-tip-gater'].includes(plan.kind) ? 0 : plan.delayMs);
    const injected = await injectFault(plan, { workers, scheduler, startWorker, redis: services.redis, docker, worldPath: world.path, at });
    result.injected = injected.what;
    result.fired = injected.fired;
    await finish(scheduler, startScheduler, result);
    await Promise.all(workers.map((w) => stopProcess(w)));
    await check(world, url, env, result);
  } catch (error) {
    result.violations.push(`the trial could not complete: ${(error as Error).message}`);
  } finally {
    await Promise.all(workers.map((w) => stopProcess(w, 2000)));
    result.durationMs = Date.now() - started;
    // A run that stopped early (a hang killed after 180 s, say) is kept too: it may be a liveness bug.
    if (!services.keep && result.violations.length === 0 && result.stops.length === 0 && result.fired) await rm(dir, { recursive: true, force: true });
    else result.warnings.push(`world kept at ${world.path}, the processes' output in ${await saveLogs(dir, processes)}`);
  }
  return result;
}

/** Waits for the run to end, starting `genesis run` again until the world is done. */
async function finish(scheduler: { current: GenesisProcess }, startScheduler: () => GenesisProcess, result: TrialResult): Promise<void> {
  for (let starts = 0; starts < 40; starts++) {
    const code = await within(scheduler.current.exited, 180_000);
    if (code === 0) return;
    const stderr = scheduler.current.stderr();
    if (code === 'timeout') {
      scheduler.current.kill('SIGKILL');
      await scheduler.current.exited;
      result.stops.push('no end within 180 s (killed)');
      result.restarts++;
    } else if (code === 1 && stderr.includes('integrator-running')) {
      // The killed scheduler's integrator lock has not expired yet (3 s here): not a restart of a run.
    } else if (code === 3) {
      // Blocked: running it again cannot help, the tasks have used up their attempts.
      throw new Error(`the run stopped blocked after the fault: ${lastLine(scheduler.current)}`);
    } else if (code !== null) {
      result.stops.push(`exit ${code}: ${lastLine(scheduler.current)}${stderr ? ` / ${stderr.trim().split('\n').slice(-2).join(' ')}` : ''}`);
      result.restarts++;
    }
    await sleep(1000);
    scheduler.current = startScheduler();
  }
  throw new Error('the world did not finish after 40 starts of genesis run');
}

function lastLine(p: GenesisProcess): string {
  const summary = p.lines.findLast((l) => l.includes('"type":"summary"'));
  return summary ? JSON.stringify((JSON.parse(summary) as { stop: unknown }).stop) : (p.lines.at(-1) ?? '').slice(0, 200);
}

/** The invariants after the trial: every task done once, no lease left, and `genesis audit` clean. */
async function check(world: { path: string; tasks: string[] }, url: string, env: Record<string, string>, result: TrialResult): Promise<void> {
  const done = (await readAcceptedHistory(world.path, 'main')).flatMap((c) => (c.task ? [c.task] : [])).sort();
  if (JSON.stringify(done) !== JSON.stringify([...world.tasks].sort()))
    result.violations.push(`tasks done: ${done.join(',') || 'none'}; expected each of ${world.tasks.join(',')} once`);
  const redis = await connectRedis(url);
  try {
    const left = await new RedisPathLeases(redis, worldKeyOf('fault-trial', world.path)).list();
    if (left.length > 0) result.violations.push(`${left.length} path lease(s) left in Redis`);
  } finally {
    redis.disconnect();
  }
  // What killed workers left is removed by the run once its episode is closed (a hygiene check, not a safety one).
  const scratch = await Promise.all(['episodes', 'gates'].map((d) => readdir(join(world.path, 'genesis', d)).catch(() => [] as string[])));
  const left = scratch.flat().filter((name) => !name.startsWith('.'));
  if (left.length > 0) result.warnings.push(`${left.length} scratch dir(s) left under genesis/episodes and genesis/gates: ${left.slice(0, 4).join(', ')}`);
  const audit = startGenesis(['audit', '--world', world.path, '--json', '--jobs', '2'], env);
  const code = await audit.exited;
  const report = JSON.parse(audit.lines.join('\n') || 'null') as {
    episodes: number;
    findings: Array<{ severity: string; code: string; message: string }>;
  } | null;
  if (!report) {
    result.violations.push(`genesis audit failed (exit ${code}): ${audit.stderr().trim().slice(-300)}`);
    return;
  }
  result.episodes = report.episodes;
  for (const f of report.findings) (f.severity === 'violation' ? result.violations : result.warnings).push(`audit ${f.code}: ${f.message}`);
  if (code !== 0 && report.findings.every((f) => f.severity !== 'violation')) result.violations.push(`genesis audit exited ${code} with no violation listed`);
}

/** Every process's stdout and stderr, for a look at a trial that went wrong. */
async function saveLogs(dir: string, processes: Array<{ name: string; p: GenesisProcess }>): Promise<string> {
  const logs = join(dir, 'logs');
  await mkdir(logs, { recursive: true });
  for (const { name, p } of processes) {
    await writeFile(join(logs, `${name}.out`), `${p.lines.join('\n')}\n`);
    await writeFile(join(logs, `${name}.err`), p.stderr());
  }
  return logs;
}
