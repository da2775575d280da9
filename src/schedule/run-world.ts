import { hostname } from 'node:os';
import { createAgent } from '../agents/create-agent.js';
import { newEpisodeId, type EpisodeJob, type EpisodeResult } from '../episode/episode-job.js';
import { runEpisode } from '../episode/run-episode.js';
import { removeStaleWorkspaces } from '../episode/workspace.js';
import { checkEvidence } from '../gate/evidence.js';
import { Integrator } from '../integrate/integrator.js';
import { MemoryEpisodeQueue } from '../queue/memory-queue.js';
import { createSandbox } from '../sandbox/create-sandbox.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { readDoneTasks } from '../world/accepted-history.js';
import type { EpisodeRecord } from '../world/episode-record.js';
import { Ledger } from '../world/ledger.js';
import type { TaskSpec, WorldManifest } from '../world/manifest-schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { PathLeases } from './path-leases.js';
import type { RunEvent, RunSummary } from './run-events.js';
import { budgetStop, idleStop, pickReadyTasks, type StopReason } from './scheduler.js';
import { deriveTaskStatuses } from './task-status.js';

export interface RunOptions {
  world: WorldRepo;
  /** Overrides the sandbox the manifest asks for (tests, benchmarks). */
  sandbox?: Sandbox;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
}

/**
 * `genesis run` on one machine: keeps up to `parallelism` episodes running on ready tasks, hands
 * each result to the integrator, records every episode in the ledger, and stops for a reason it
 * names. Everything it needs to resume is in the world, so running it again carries on.
 */
export async function runWorld(options: RunOptions): Promise<RunSummary> {
  const started = Date.now();
  const { world } = options;
  const emit = options.onEvent ?? (() => undefined);
  const manifest = await world.manifestAt('HEAD');
  let head = await world.head(manifest.branch);
  const sandbox = options.sandbox ?? (await createSandbox(manifest.verify.sandbox, { image: manifest.verify.image }));
  await sandbox.check();
  const agent = await createAgent(manifest, world, head);
  const ledger = new Ledger(world.path);
  const records = new Map((await ledger.readAll()).map((r) => [r.id, r]));
  const recovered = await closeAbandoned(ledger, records);
  await removeStaleWorkspaces(world);
  const done = await readDoneTasks(world.path, manifest.branch);
  emit({ type: 'start', world: world.path, head, sandbox: sandbox.kind, agent: agent.label, tasks: manifest.tasks.length, done: done.size, recovered, parallelism: manifest.parallelism });

  const worker = `${hostname()}:${process.pid}`;
  const queue = new MemoryEpisodeQueue(
    (job, signal) => runEpisode(job, { world, ledger, sandbox, agent, worker, signal, onPhase: (j, phase) => emit({ type: 'episode-phase', id: j.episodeId, task: j.task, phase }) }),
    manifest.parallelism,
  );
  const integrator = new Integrator(world, sandbox, manifest.branch);
  const leases = new PathLeases();
  const running = new Map<string, TaskSpec>();
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

  try {
    while (true) {
      if (options.signal?.aborted && !stop) {
        stop = { kind: 'interrupted' };
        await queue.close();
      }
      const statuses = deriveTaskStatuses(manifest.tasks, done, [...records.values()], new Set([...running.values()].map((t) => t.id)), manifest.retry.maxAttempts);
      if (!stop) {
        const budget = budgetStop(manifest.goal.stop, records.size, hoursSince(records));
        const idle = running.size === 0 ? idleStop(manifest.tasks, statuses) : null;
        if (idle) stop = idle;
        else if (budget && running.size === 0) stop = budget;
        else if (!budget) {
          const ids = new Map<string, string>();
          const picks = pickReadyTasks(manifest.tasks, statuses, manifest.parallelism - running.size, (task) => {
            const id = newEpisodeId();
            const ok = leases.tryAcquire(id, task.paths);
            if (ok) ids.set(task.id, id);
            return ok;
          });
          const allowed = manifest.goal.stop.maxEpisodes === undefined ? picks : picks.slice(0, manifest.goal.stop.maxEpisodes - records.size);
          for (const task of picks.filter((t) => !allowed.includes(t))) leases.release(ids.get(task.id)!);
          for (const task of allowed) {
            const id = ids.get(task.id)!;
            const attempt = (statuses.get(task.id)?.failures ?? 0) + 1;
            const record = newRecord(id, manifest, task, attempt, head, agent.label, worker);
            await ledger.write(record);
            records.set(id, record);
            running.set(id, task);
            tally.episodes++;
            emit({ type: 'episode-start', id, task: task.id, attempt });
            const job: EpisodeJob = { episodeId: id, world: manifest.name, task: task.id, attempt, base: head };
            await queue.submit(job);
          }
          if (running.size === 0) stop = { kind: 'blocked', blocked: [], waiting: manifest.tasks.filter((t) => statuses.get(t.id)?.state === 'pending').map((t) => ({ task: t.id, on: 'unschedulable' })) };
        }
      }
      if (running.size === 0) break;
      emit({ type: 'progress', done: done.size, tasks: manifest.tasks.length, running: [...running.values()].map((t) => t.id), ...pick(tally) });
      pendingResult ??= queue.nextResult();
      const next = await Promise.race([pendingResult, stop ? new Promise<never>(() => undefined) : aborted]);
      if (next === 'aborted') continue;
      pendingResult = null;
      const final = await finish(next);
      running.delete(next.episodeId);
      leases.release(next.episodeId);
      tally[final.outcome!]++;
      emit({ type: 'episode-end', id: final.id, task: final.task, attempt: final.attempt, outcome: final.outcome!, reason: final.reason, message: final.message, commit: final.commit, durationMs: Date.parse(final.endedAt!) - Date.parse(final.startedAt) });
      if (final.outcome === 'accepted') {
        head = final.commit!;
        done.add(final.task);
        if (!stop && (await evidenceMet())) stop = { kind: 'evidence', command: manifest.goal.evidence! };
      }
    }
  } finally {
    await queue.close();
  }
  emit({ type: 'stop', reason: stop! });
  return { stop: stop!, head, ...tally, durationMs: Date.now() - started, evidence };

  async function finish(result: EpisodeResult): Promise<EpisodeRecord> {
    const record = (await ledger.read(result.episodeId)) ?? records.get(result.episodeId)!;
    const t0 = performance.now();
    let final: EpisodeRecord;
    if (result.verdict === 'passed') {
      const task = manifest.tasks.find((t) => t.id === result.task)!;
      const outcome = await integrator.integrate({ result, title: task.title, agent: record.agent, verified: record.gate?.summary ?? 'passed' });
      final = outcome.outcome === 'accepted'
        ? { ...record, outcome: 'accepted', commit: outcome.commit, reason: outcome.replayed ? 'replayed' : null, message: outcome.replayed ? `replayed on a newer head and verified again: ${outcome.gate?.summary ?? ''}` : record.message }
        : { ...record, outcome: 'rejected', reason: outcome.reason, message: outcome.message, signature: outcome.signature, gate: outcome.gate ?? record.gate };
      final.phases = { ...final.phases, integrate: Math.round(performance.now() - t0) };
      const gateLog = outcome.outcome === 'rejected' && outcome.gateLog ? { gateLog: outcome.gateLog } : {};
      final = { ...final, status: 'final', endedAt: new Date().toISOString() };
      await ledger.write(final, gateLog);
    } else {
      final = { ...record, status: 'final', outcome: result.verdict, reason: result.reason, message: result.message, signature: result.signature, endedAt: new Date().toISOString() };
      await ledger.write(final);
    }
    records.set(final.id, final);
    return final;
  }
}

function pick(t: { accepted: number; rejected: number; failed: number }) {
  return { accepted: t.accepted, rejected: t.rejected, failed: t.failed };
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
