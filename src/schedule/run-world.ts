import { hostname } from 'node:os';
import { createAgent } from '../agents/create-agent.js';
import { spendOf } from '../agents/usage-check.js';
import { isGenesisError } from '../errors.js';
import { agentForAttempt } from '../agents/rotation.js';
import { newEpisodeId, type EpisodeJob, type EpisodeResult } from '../episode/episode-job.js';
import { runEpisode } from '../episode/run-episode.js';
import { removeStaleWorkspaces } from '../episode/workspace.js';
import { checkEvidence } from '../gate/evidence.js';
import { Integrator } from '../integrate/integrator.js';
import type { EpisodeQueue } from '../queue/episode-queue.js';
import { MemoryEpisodeQueue } from '../queue/memory-queue.js';
import { createSandbox } from '../sandbox/create-sandbox.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { readDoneTasks } from '../world/accepted-history.js';
import type { EpisodeRecord } from '../world/episode-record.js';
import { Ledger } from '../world/ledger.js';
import { secretEnvNames } from '../world/secret-env.js';
import type { TaskSpec, WorldManifest } from '../world/manifest-schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { finishEpisode } from './finish-episode.js';
import { MemoryLeaseStore, type LeaseStore } from './lease-store.js';
import type { RunEvent, RunSummary } from './run-events.js';
import { budgetStop, idleStop, pickReadyTasks, type StopReason } from './scheduler.js';
import { deriveWorldTaskStatuses } from './world-task-status.js';
import type { TaskStatus } from './task-status.js';
import { readTaskRetries } from '../world/task-retries.js';

/** Where episodes run when they do not run in this process. */
export interface DistributedRun {
  queue: EpisodeQueue;
  leases: LeaseStore;
  /** How often to check that the queue still holds every running episode. @default 5000 */
  reconcileMs?: number;
}

export interface RunOptions {
  world: WorldRepo;
  /** Overrides the sandbox the manifest asks for (tests, benchmarks). */
  sandbox?: Sandbox;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** Workers elsewhere, through a shared queue; without it episodes run in this process. */
  distributed?: DistributedRun;
}

/**
 * `genesis run`: keeps up to `parallelism` episodes running on ready tasks, hands each result to
 * the integrator, records every episode in the ledger, and stops for a reason it names.
 * Everything it needs to resume is in the world, so running it again carries on.
 */
export async function runWorld(options: RunOptions): Promise<RunSummary> {
  const started = Date.now();
  const { world } = options;
  const emit = options.onEvent ?? (() => undefined);
  // Reloaded after every accepted change: a planner may have added tasks.
  let manifest = await world.manifestAt('HEAD');
  let head = await world.head(manifest.branch);
  const sandbox = options.sandbox ?? (await createSandbox(manifest.verify.sandbox, { image: manifest.verify.image }));
  await sandbox.check();
  const agent = await createAgent(manifest, world, head);
  const ledger = new Ledger(world.path, { secretEnv: secretEnvNames(manifest.agent) });
  const records = new Map((await ledger.readAll()).map((r) => [r.id, r]));
  const worker = `${hostname()}:${process.pid}`;
  const queue = options.distributed?.queue ?? new MemoryEpisodeQueue(
    (job, signal) => runEpisode(job, { world, ledger, sandbox, agent, worker, signal, onPhase: (j, phase) => emit({ type: 'episode-phase', id: j.episodeId, task: j.task, phase }) }),
    manifest.parallelism,
  );
  const leases = options.distributed?.leases ?? new MemoryLeaseStore();
  const integrator = new Integrator(world, sandbox, manifest.branch, head);
  const guard = async () => {
    const moved = await integrator.guard();
    if (moved) emit({ type: 'foreign-move', commit: moved.foreign, quarantine: moved.quarantine });
  };
  const running = new Map<string, { task: TaskSpec; job: EpisodeJob }>();
  // Tasks whose last episode met an outage of the machine (Docker down, …) wait a little before the next.
  const cooldown = new Map<string, number>();
  // Distributed: records left running may belong to episodes workers still run; their results
  // are owed by the queue. In process, nothing can still be running them.
  const recovered = options.distributed ? adoptRunning(records, running, manifest) : await closeAbandoned(ledger, records);
  if (!options.distributed) await removeStaleWorkspaces(world);
  const done = await readDoneTasks(world.path, manifest.branch);
  emit({ type: 'start', world: world.path, head, sandbox: sandbox.kind, agent: agent.label, tasks: manifest.tasks.length, done: done.size, recovered, parallelism: manifest.parallelism });

  const tally = { accepted: 0, rejected: 0, failed: 0, abandoned: 0, episodes: 0 };
  let evidence: RunSummary['evidence'] = null;
  let stop: StopReason | null = null;
  let pendingResult: Promise<EpisodeResult> | null = null;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (options.signal?.aborted) resolve('aborted');
    options.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  const evidenceMet = async (): Promise<boolean> => {
    const verdict = await checkEvidence(world, sandbox, manifest, head);
    if (!verdict) return false;
    evidence = { command: manifest.goal.evidence!, passed: verdict.ok };
    emit({ type: 'evidence', commit: head, passed: verdict.ok, command: manifest.goal.evidence! });
    return verdict.ok;
  };
  if (await evidenceMet()) stop = { kind: 'evidence', command: manifest.goal.evidence! };

  const maxEpisodes = manifest.goal.stop.maxEpisodes ?? Infinity;
  const startEpisodes = async (statuses: Map<string, TaskStatus>): Promise<void> => {
    for (const task of pickReadyTasks(manifest.tasks, statuses, Infinity, (t) => (cooldown.get(t.id) ?? 0) <= Date.now())) {
      // No episode starts that could cross the episode budget, counted across runs.
      if (running.size >= manifest.parallelism || records.size >= maxEpisodes) break;
      const id = newEpisodeId();
      if (!(await leases.tryAcquire(id, task.paths))) continue;
      const attempt = (statuses.get(task.id)?.failures ?? 0) + 1;
      const record = newRecord(id, manifest, task, attempt, head, agentForAttempt(agent, attempt).label, worker);
      await ledger.write(record);
      records.set(id, record);
      const earlier = [...records.values()].filter((r) => r.task === task.id && r.id !== id && r.status === 'final' && r.outcome !== 'accepted').map((r) => r.id).slice(-10);
      const job: EpisodeJob = { episodeId: id, world: manifest.name, task: task.id, attempt, base: head, earlier };
      running.set(id, { task, job });
      tally.episodes++;
      emit({ type: 'episode-start', id, task: task.id, attempt });
      await queue.submit(job);
    }
  };

  try {
    while (true) {
      await guard();
      if (options.signal?.aborted && !stop) {
        stop = { kind: 'interrupted' };
        await queue.close();
      }
      // A person's `genesis task retry` (or the dashboard's button) gives a blocked task fresh attempts.
      const retries = await readTaskRetries(world.path);
      const statuses: Map<string, TaskStatus> = deriveWorldTaskStatuses({ manifest, done, episodes: [...records.values()], running: new Set([...running.values()].map((r) => r.task.id)), retries });
      if (!stop) {
        const budget = budgetStop(manifest.goal.stop, records.size, hoursSince(records), spentBy(records));
        const idle = running.size === 0 ? idleStop(manifest.tasks, statuses) : null;
        if (idle) stop = idle;
        else if (budget && running.size === 0) stop = budget;
        else if (budget?.kind === 'budget' && budget.budget !== 'maxEpisodes' && !options.distributed) {
          // Budgets are hard: episodes still running when one is crossed are stopped (their work is quarantined).
          stop = budget;
          await queue.close();
        }
        else if (!budget) {
          await startEpisodes(statuses);
          if (running.size === 0) stop = { kind: 'blocked', blocked: [], waiting: manifest.tasks.filter((t) => statuses.get(t.id)?.state === 'pending').map((t) => ({ task: t.id, on: 'unschedulable' })) };
        }
      }
      if (running.size === 0) break;
      emit({ type: 'progress', done: done.size, tasks: manifest.tasks.length, running: [...running.values()].map((r) => r.task.id), accepted: tally.accepted, rejected: tally.rejected, failed: tally.failed });
      pendingResult ??= queue.nextResult();
      const wake = options.distributed?.reconcileMs ?? ([...cooldown.values()].some((t) => t > Date.now()) ? OUTAGE_COOLDOWN_MS : undefined);
      const next = await Promise.race([pendingResult, stop ? new Promise<never>(() => undefined) : aborted, reconcileTick(wake), hoursDeadline(manifest.goal.stop.maxHours, records)]);
      if (next === 'aborted') continue;
      if (next === 'tick') {
        for (const { job } of running.values()) {
          await leases.renew(job.episodeId);
          await queue.ensureSubmitted(job);
        }
        continue;
      }
      pendingResult = null;
      if (!running.has(next.episodeId)) {
        await queue.acknowledge(next.episodeId); // a result delivered twice, already handled
        continue;
      }
      await guard(); // a foreign move is reported here, not only put back silently inside integrate
      const final = await finishWithRetries(() => finishEpisode({ world, ledger, integrator, manifest }, next, records.get(next.episodeId)));
      records.set(final.id, final);
      running.delete(next.episodeId);
      await leases.release(next.episodeId);
      await queue.acknowledge(next.episodeId);
      tally[final.outcome!]++;
      if (final.outcome === 'abandoned' && final.reason !== 'aborted') cooldown.set(final.task, Date.now() + OUTAGE_COOLDOWN_MS);
      if (next.fatal && !stop) stop = { kind: 'circuit-open', reason: next.reason ?? 'agent-broken', message: next.message ?? '' };
      emit({ type: 'episode-end', id: final.id, task: final.task, attempt: final.attempt, outcome: final.outcome!, reason: final.reason, message: final.message, commit: final.commit, durationMs: Date.parse(final.endedAt!) - Date.parse(final.startedAt) });
      if (final.outcome === 'accepted') {
        head = await world.head(manifest.branch);
        done.add(final.task);
        manifest = await world.manifestAt(head);
        if (!stop && (await evidenceMet())) stop = { kind: 'evidence', command: manifest.goal.evidence! };
      }
    }
  } finally {
    await queue.close();
  }
  await guard();
  emit({ type: 'stop', reason: stop! });
  return { stop: stop!, head, ...tally, durationMs: Date.now() - started, evidence };
}

const OUTAGE_COOLDOWN_MS = 2_000;

/**
 * Integrating needs the sandbox (a replay is verified again) and git: an outage there is waited
 * out with a backoff instead of ending the run; the result stays owed until it is integrated.
 */
async function finishWithRetries(finish: () => Promise<EpisodeRecord>): Promise<EpisodeRecord> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await finish();
    } catch (error) {
      if (!isGenesisError(error) || !error.retryable || attempt >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 30_000)));
    }
  }
}

/** Wakes the loop when the hours budget runs out, so running episodes are stopped on time. */
function hoursDeadline(maxHours: number | undefined, records: Map<string, EpisodeRecord>): Promise<'tick'> {
  if (maxHours === undefined || records.size === 0) return new Promise(() => undefined);
  const left = (maxHours - hoursSince(records)) * 3_600_000;
  return new Promise((resolve) => setTimeout(() => resolve('tick'), Math.max(0, Math.min(left + 50, 2 ** 31 - 1))).unref());
}

function reconcileTick(ms: number | undefined): Promise<'tick'> {
  if (ms === undefined) return new Promise(() => undefined);
  return new Promise((resolve) => setTimeout(() => resolve('tick'), ms).unref());
}

function spentBy(records: Map<string, EpisodeRecord>): { costUsd: number; tokens: number } {
  let costUsd = 0;
  let tokens = 0;
  for (const r of records.values()) {
    // Clamped again: a record written before usage was checked may hold a negative cost.
    const spent = spendOf(r.usage);
    costUsd += spent.costUsd;
    tokens += spent.tokens;
  }
  return { costUsd, tokens };
}

function hoursSince(records: Map<string, EpisodeRecord>): number {
  let first = Infinity;
  for (const r of records.values()) first = Math.min(first, Date.parse(r.startedAt));
  return Number.isFinite(first) ? (Date.now() - first) / 3_600_000 : 0;
}

function newRecord(id: string, manifest: WorldManifest, task: TaskSpec, attempt: number, base: string, agent: string, worker: string): EpisodeRecord {
  return {
    version: 1, id, world: manifest.name, task: task.id, attempt, agent, base, candidate: null, commit: null,
    status: 'running', outcome: null, reason: null, message: null, signature: null,
    startedAt: new Date().toISOString(), endedAt: null, phases: {}, gate: null, changedFiles: [], usage: null, worker,
  };
}

/** Records left `running` by an orchestrator that died are closed: nothing is left unaccounted. */
async function closeAbandoned(ledger: Ledger, records: Map<string, EpisodeRecord>): Promise<number> {
  let count = 0;
  for (const record of records.values()) {
    if (record.status !== 'running') continue;
    const closed: EpisodeRecord = { ...record, status: 'final', outcome: 'abandoned', reason: 'orchestrator-stopped', message: 'the orchestrator stopped before this episode ended', endedAt: new Date().toISOString() };
    await ledger.write(closed);
    records.set(record.id, closed);
    count++;
  }
  return count;
}

/** A restarted distributed scheduler takes back the episodes its workers are still running. */
function adoptRunning(records: Map<string, EpisodeRecord>, running: Map<string, { task: TaskSpec; job: EpisodeJob }>, manifest: WorldManifest): number {
  for (const r of records.values()) {
    const task = manifest.tasks.find((t) => t.id === r.task);
    if (r.status !== 'running' || !task) continue;
    running.set(r.id, { task, job: { episodeId: r.id, world: manifest.name, task: r.task, attempt: r.attempt, base: r.base } });
  }
  return running.size;
}
