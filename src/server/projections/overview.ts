import type { EpisodeRecord } from '../../ledger/episode-record.js';
import { type BudgetStanding, budgetStanding } from '../../schedule/budget-standing.js';
import type { TaskBoard } from './task-board.js';
import type { LivenessProbe, WorkerLiveness } from './worker-liveness.js';
import type { WorldSnapshot } from './world-snapshot.js';

/**
 * What a run is doing, as far as the world shows it. `running`: episodes are in flight; `done`:
 * every task landed; `blocked`: nothing can start because what is left is blocked; `budget`: a
 * budget of goal.stop is spent; `idle`: tasks could start but no run is going; `stale`: the only
 * episodes marked running belong to workers that are gone.
 */
export type RunState = 'running' | 'done' | 'blocked' | 'budget' | 'idle' | 'stale';

/** The dashboard's front page. */
export interface Overview {
  world: {
    name: string;
    path: string;
    branch: string;
    head: string;
    outcome: string;
    evidence: string | null;
    sandbox: string;
    agent: string;
    parallelism: number;
    maxAttempts: number;
  };
  run: { state: RunState; why: string };
  tasks: TaskBoard['counts'];
  episodes: { total: number; running: number; accepted: number; rejected: number; failed: number; abandoned: number; outrun: number };
  running: Array<{ id: string; task: string; attempt: number; agent: string; worker: string; startedAt: string; liveness: WorkerLiveness }>;
  /** Workers seen in running episodes, with what this host can tell about them. */
  workers: Array<{ worker: string; liveness: WorkerLiveness; episodes: number }>;
  /** Each budget world.yaml sets, with its lifts, as the run holds the world to it (the same figures as `genesis budget --json`). */
  budgets: BudgetStanding[];
  /** Known usage totals; null when no episode reported that figure. */
  usage: { costUsd: number | null; inputTokens: number | null; outputTokens: number | null };
  lastAccepted: { commit: string; task: string | null; date: string } | null;
  stamp: string;
}

/** Builds the overview from a snapshot and the tasks board derived from it. */
export function buildOverview(snapshot: WorldSnapshot, board: TaskBoard, probe: LivenessProbe, now: Date): Overview {
  const { manifest, records } = snapshot;
  const inFlight = records.filter((r) => r.status === 'running').map((r) => ({ record: r, liveness: probe(r.worker) }));
  const running = inFlight.filter((r) => r.liveness !== 'gone');
  const outcomes = (outcome: string) => records.filter((r) => r.outcome === outcome).length;
  const budgets = budgetStanding(manifest.goal.stop, snapshot.lifts, records, now);
  const lastAccepted = snapshot.history.find((c) => c.task !== null) ?? null;
  const workers = new Map<string, { worker: string; liveness: WorkerLiveness; episodes: number }>();
  for (const { record, liveness } of inFlight) {
    const entry = workers.get(record.worker) ?? { worker: record.worker, liveness, episodes: 0 };
    entry.episodes++;
    workers.set(record.worker, entry);
  }
  return {
    world: {
      name: manifest.name,
      path: snapshot.path,
      branch: manifest.branch,
      head: snapshot.head,
      outcome: manifest.goal.outcome,
      evidence: manifest.goal.evidence ?? null,
      sandbox: manifest.verify.sandbox,
      agent: manifest.agent.kind,
      parallelism: manifest.parallelism,
      maxAttempts: manifest.retry.maxAttempts,
    },
    run: describeRun(
      board,
      running.map((r) => r.record),
      inFlight.length - running.length,
      budgets,
      snapshot.path,
    ),
    tasks: board.counts,
    episodes: {
      total: records.length,
      running: running.length,
      accepted: outcomes('accepted'),
      rejected: outcomes('rejected'),
      failed: outcomes('failed'),
      abandoned: outcomes('abandoned'),
      outrun: outcomes('outrun'),
    },
    running: running.map(({ record: r, liveness }) => ({
      id: r.id,
      task: r.task,
      attempt: r.attempt,
      agent: r.agent,
      worker: r.worker,
      startedAt: r.startedAt,
      liveness,
    })),
    workers: [...workers.values()],
    budgets,
    usage: sumUsage(records),
    lastAccepted: lastAccepted ? { commit: lastAccepted.commit, task: lastAccepted.task, date: lastAccepted.date } : null,
    stamp: snapshot.stamp,
  };
}

function describeRun(board: TaskBoard, running: EpisodeRecord[], stale: number, budgets: BudgetStanding[], path: string): Overview['run'] {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (running.length > 0) {
    return { state: 'running', why: `${plural(running.length, 'episode')} running: ${[...new Set(running.map((r) => r.task))].join(', ')}` };
  }
  const { counts, tasks } = board;
  if (counts.total > 0 && counts.done === counts.total) return { state: 'done', why: `every task is done (${plural(counts.total, 'task')})` };
  const spent = budgets.find((b) => b.spent);
  if (spent)
    return {
      state: 'budget',
      why: `the ${spent.name} budget is spent (${spent.used} of ${spent.limit} ${spent.unit}); lift it to go on: genesis budget lift --world ${path} --reason "…" (see genesis budget lift --help)`,
    };
  const blocked = tasks.filter((t) => t.state === 'blocked');
  const startable = tasks.filter((t) => t.state === 'pending' && !t.waitingOn);
  if (blocked.length > 0 && startable.length === 0) {
    const list = blocked.map((t) => `${t.id} (${t.lastFailure?.reason ?? 'unknown'})`).join(', ');
    return { state: 'blocked', why: `nothing can start: blocked ${list}; read their last episodes, then retry them on the tasks page` };
  }
  if (stale > 0) {
    return { state: 'stale', why: `${plural(stale, 'episode')} marked running belong to workers that are gone; the next genesis run closes them as abandoned` };
  }
  return { state: 'idle', why: `no run is going; ${plural(startable.length, 'task')} can start: genesis run --world ${path}` };
}

function sumUsage(records: readonly EpisodeRecord[]): Overview['usage'] {
  const sum = (pick: (u: NonNullable<EpisodeRecord['usage']>) => number | null) => {
    const known = records.flatMap((r) => (r.usage && pick(r.usage) !== null ? [pick(r.usage)!] : []));
    return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
  };
  return { costUsd: sum((u) => u.costUsd), inputTokens: sum((u) => u.inputTokens), outputTokens: sum((u) => u.outputTokens) };
}
