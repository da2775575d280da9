/**
 * Fault injection: with a fixed seed and a number of trials, each trial builds a small world,
 * runs it distributed (a scheduler and three workers on a private Redis, fast stall detection),
 * injects one fault at a random moment, runs `genesis run` again until the world is done, and
 * audits it. The target is zero violations.
 *
 *   node --import tsx scripts/fault-injection.ts --seed 7 --trials 10 [--docker] [--faults k1,k2] [--keep] [--port n]
 *
 * Faults: kill -9 of a worker running an episode, of the scheduler at any moment, of the
 * scheduler while it integrates a result, of a worker while it gates a change on its reserved tip,
 * of the scheduler between such a gate's passing result and its landing, a crash and restart of
 * Redis (append-only file on); with --docker also a restart of a Docker daemon during a gate. That
 * daemon is a private one this script starts (own socket and data root), never the machine's:
 * restarting that one would break everyone's containers. Each trial says whether its fault fired
 * (met what it is meant to hit). Exit code: 1 when a trial found a violation, else 2 when a fault
 * did not fire, else 0.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRng } from '../src/reliability/prng.js';
import { FAULT_KINDS, planFault } from './fault-injection/faults.js';
import { PrivateDocker } from './fault-injection/private-docker.js';
import { PrivateRedis } from './fault-injection/private-redis.js';
import { formatReport } from './fault-injection/report.js';
import { runTrial, type TrialResult } from './fault-injection/run-trial.js';
import { stopAllGenesis } from './fault-injection/genesis-process.js';

const HELP = `Usage: node --import tsx scripts/fault-injection.ts [options]

Each trial builds a small world (six independent tasks), runs it distributed (a scheduler and three
workers on a private Redis), injects one fault, runs genesis run again until the world is done, and
checks it: every task landed once, no path lease left in Redis, genesis audit clean. A seed replays
the same plan of trials.

Options:
  --seed <n>        seed of the trial plan (default 7)
  --trials <n>      how many trials (default 10); the kinds are taken in turn
  --faults <k,...>  only these kinds: ${FAULT_KINDS.join(', ')}
  --docker          gates in Docker, on a private daemon this script starts; adds restart-docker
  --keep            keep every trial's world (a trial with a violation or a run that stopped early
                    keeps it anyway, with the scheduler's and workers' output under <trial dir>/logs)
  --port <n>        port of the private Redis (default 17000 + seed % 1000)
  -h, --help        this text

A fault that found nothing to hit (no episode in flight, no change gating on its reserved tip, no
result waiting to land) is reported as "did not fire", never as a pass.

Exit code: 1 when a trial found a violation, else 2 when some fault did not fire, else 0.`;

const { values } = parseArgs({
  options: {
    help: { type: 'boolean', short: 'h', default: false },
    seed: { type: 'string', default: '7' },
    trials: { type: 'string', default: '10' },
    docker: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    port: { type: 'string' },
    faults: { type: 'string' },
  },
});
if (values.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const seed = Number(values.seed);
const trials = Number(values.trials);
const chosen = values.faults?.split(',').map((k) => k.trim()) ?? FAULT_KINDS;
const kinds = FAULT_KINDS.filter((k) => chosen.includes(k) && (values.docker || k !== 'restart-docker'));
if (kinds.length === 0) throw new Error(`no fault kinds left; choose from ${FAULT_KINDS.join(', ')} (restart-docker needs --docker)`);
const rng = createRng(seed);
const started = Date.now();
const state = await mkdtemp(join(tmpdir(), 'genesis-faults-'));
const redis = new PrivateRedis(Number(values.port ?? 17_000 + (seed % 1000)), join(state, 'redis'));
const docker = values.docker ? new PrivateDocker(join(state, 'docker')) : null;
const results: TrialResult[] = [];
// Ctrl-C must not leave the private Redis or dockerd running, nor their state: they are this script's.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAllGenesis()
      .then(() => Promise.all([redis.stop(), docker?.stop()]))
      // The private daemon's data root alone holds hundreds of MB.
      .then(() => rm(state, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  });
}
try {
  await mkdir(join(state, 'redis'));
  await redis.start();
  if (docker) {
    await docker.start();
    await docker.buildImage();
    // initWorld verifies each trial world's first commit in this process, through this daemon.
    process.env.DOCKER_HOST = docker.host;
  }
  for (let trial = 1; trial <= trials; trial++) {
    const plan = planFault(rng, trial - 1, kinds);
    process.stderr.write(`trial ${trial}/${trials}: ${plan.kind} (delay ${plan.delayMs} ms, agents ${plan.sleepMs} ms) ... `);
    const result = await runTrial(trial, plan, { redis, docker, keep: values.keep }, seed);
    results.push(result);
    const verdict = result.violations.length > 0 ? `${result.violations.length} violation(s)` : result.fired ? 'ok' : 'ok, but the fault did not fire';
    process.stderr.write(`${verdict} in ${(result.durationMs / 1000).toFixed(1)}s\n`);
  }
} finally {
  await redis.stop().catch(() => undefined);
  await docker?.stop().catch(() => undefined);
  await rm(state, { recursive: true, force: true }).catch(() => undefined);
}
process.stdout.write(`${formatReport(results, kinds, seed, Date.now() - started)}\n`);
process.exitCode = results.some((r) => r.violations.length > 0) ? 1 : results.some((r) => !r.fired) ? 2 : 0;
