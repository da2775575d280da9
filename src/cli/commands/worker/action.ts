import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../../../agents/create-agent.js';
import { killOrphanedAgents } from '../../../sandbox/agent/process-tracker.js';
import { GenesisError } from '../../../errors/genesis-error.js';
import { startEpisodeWorker, type WorkerEvent } from '../../../queue/bullmq/episode-worker.js';
import { connectRedis } from '../../../queue/redis/connection.js';
import { RedisModelHolds } from '../../../queue/redis/model-holds.js';
import { sharedModelGateway } from '../../../channel/shared-gateway.js';
import { RedisPathLeases } from '../../../queue/redis/path-leases.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { EXIT } from '../../exit-codes.js';
import type { WorkerCliOptions } from './worker.js';
import { preflightWorker } from './preflight.js';
import { formatWorkerLine, type WorkerLine } from './event-lines.js';
import { WaitBoard } from '../../wait-board.js';
import { WorkerHealthFile } from './health-file.js';
import { runVerification } from '../../../integrate/verification/run-verification.js';

export async function runWorkerCommand(opts: WorkerCliOptions): Promise<number> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new GenesisError('bad-option', `--concurrency must be a whole number of at least 1, got ${opts.concurrency}`);
  }
  const redis = await connectRedis(opts.redis, { name: 'genesis-worker' });
  // A usage limit one worker's episode meets holds every worker's episodes on the same credential.
  sharedModelGateway().shareHolds(new RedisModelHolds(redis));
  // Until the worker has its id (it takes one as it joins the queue), its lines carry host:pid.
  let label = `${hostname()}:${process.pid}`;
  const print = (event: WorkerLine) => process.stdout.write(formatWorkerLine(label, event, opts.json === true));
  // As genesis run does: a wait is told once it lasts 5 s, then every 30 s, with how long so far (--json prints each begin and end).
  const waits = new WaitBoard();
  const waitTimer = setInterval(() => {
    for (const w of waits.due(Date.now())) print({ type: 'waiting', task: w.task, what: w.what, ms: w.ms });
  }, 1000);
  waitTimer.unref();
  const onEvent = (e: WorkerEvent) => {
    if (e.type !== 'wait' || opts.json) return print({ ...e });
    const label = e.phase === 'verification' ? `${e.task} (verification)` : e.phase === 'calibration' ? `${e.task} (calibration gate ${e.episodeId})` : e.task;
    waits.note(`${e.episodeId}:${e.phase ?? 'episode'}`, label, e.what ?? null, Date.now());
  };
  // A worker that died by kill -9 left its unsandboxed agents to the next start, which is this one.
  const orphans = await killOrphanedAgents();
  if (orphans > 0) print({ type: 'orphans-killed', processes: orphans });
  // Before the first job is taken: the probes (and code) that job would otherwise wait for.
  const preflight = await preflightWorker();
  const unconfined = unconfinedBy(preflight);
  if (unconfined && opts.refuseUnconfined) {
    // Nothing of this worker may keep the process alive after it refused.
    clearInterval(waitTimer);
    redis.disconnect();
    throw new GenesisError('worker-unconfined', `this worker cannot confine ${unconfined}, so it takes no job`, {
      hint: 'run `genesis doctor` here: it says which probe failed and what the machine or pod must allow (docs/guides/kubernetes.md, Confinement)',
    });
  }
  const health = opts.healthFile ? new WorkerHealthFile(opts.healthFile) : null;
  const worker = await startEpisodeWorker({
    redis,
    concurrency: opts.concurrency,
    cacheDir: opts.cacheDir ?? join(homedir(), '.cache', 'genesis', 'worlds'),
    lockDurationMs: numberFromEnv('GENESIS_LOCK_MS'),
    stalledIntervalMs: numberFromEnv('GENESIS_STALLED_MS'),
    onEvent,
    // The composition root: each job's world says which agent and sandbox it needs.
    createAgent,
    createSandbox: (m) => createSandbox(m.verify.sandbox, { image: m.verify.image }),
    leases: (worldKey) => new RedisPathLeases(redis, worldKey),
    runVerification,
  });
  label = worker.id;
  print({
    type: 'ready',
    worker: worker.id,
    concurrency: opts.concurrency,
    redis: opts.redis,
    sandboxes: preflight.sandboxes,
    agentSandbox: preflight.agentSandbox,
    preflightMs: preflight.ms,
  });
  await health?.set(unconfined ? 'unconfined' : 'ready', { worker: worker.id, sandboxes: preflight.sandboxes, agentSandbox: preflight.agentSandbox });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) {
        print({ type: 'stopping', how: 'handing running episodes back to the queue' });
        void worker.close(true).then(resolve);
        return;
      }
      stopping = true;
      void health?.set('stopping', { worker: worker.id });
      print({ type: 'stopping', how: 'finishing running episodes (signal again to hand them back)' });
      void worker.close(false).then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  clearInterval(waitTimer);
  await health?.remove();
  redis.disconnect();
  return EXIT.ok;
}

/** What the worker could not confine, as a phrase, or null when its gates and agents both have a sandbox. */
function unconfinedBy(preflight: { sandboxes: string[]; agentSandbox: string | null }): string | null {
  const missing = [preflight.sandboxes.length === 0 ? 'gates (no docker, no bubblewrap)' : null, preflight.agentSandbox ? null : 'agents (no bubblewrap)'];
  const said = missing.filter((m) => m !== null);
  return said.length ? said.join(' nor ') : null;
}

/** Test and operations knobs for BullMQ's stall detection, in milliseconds. */
function numberFromEnv(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined ? undefined : Number(value);
}
