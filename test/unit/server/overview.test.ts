import { describe, expect, it } from 'vitest';
import { buildOverview } from '../../../src/server/projections/overview.js';
import { buildTaskBoard } from '../../../src/server/projections/task-board.js';
import { withClusterHolders, type WorkerLiveness } from '../../../src/server/projections/worker-liveness.js';
import type { WorldSnapshot } from '../../../src/server/projections/world-snapshot.js';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { readManifest } from '../../../src/manifest/parse.js';

const manifest = readManifest(`
name: w
goal: { outcome: two modules, stop: { maxEpisodes: 3, maxHours: 10 } }
verify: { test: "true" }
agent: { kind: script, script: r.yaml }
retry: { maxAttempts: 2 }
tasks:
  - { id: a, title: module a, paths: [a.js] }
  - { id: b, title: module b, paths: [b.js] }
`);

function record(id: string, task: string, outcome: EpisodeRecord['outcome'], worker = 'elsewhere:1'): EpisodeRecord {
  return {
    version: 1,
    id,
    world: 'w',
    task,
    attempt: 1,
    agent: 'script',
    base: '0'.repeat(40),
    candidate: null,
    commit: null,
    status: outcome ? 'final' : 'running',
    outcome,
    reason: outcome === 'rejected' ? 'check-failed' : null,
    message: null,
    signature: null,
    startedAt: '2026-01-01T10:00:00.000Z',
    endedAt: outcome ? '2026-01-01T10:01:00.000Z' : null,
    phases: {},
    gate: null,
    changedFiles: [],
    usage: outcome ? { inputTokens: 100, outputTokens: 10, costUsd: 0.5 } : null,
    worker,
  };
}

function snapshot(records: EpisodeRecord[], lifts: WorldSnapshot['lifts'] = []): WorldSnapshot {
  return { stamp: 's', path: '/w', manifest, head: '1'.repeat(40), history: [], records, retries: [], lifts, readAt: new Date() };
}

const overviewOf = (records: EpisodeRecord[], liveness: WorkerLiveness = 'unknown', lifts: WorldSnapshot['lifts'] = []) => {
  const probe = () => liveness;
  const s = snapshot(records, lifts);
  return buildOverview(s, buildTaskBoard(s, probe), probe, new Date('2026-01-01T12:00:00.000Z'));
};

describe('the overview', () => {
  it('is running while an episode runs, and names its task', () => {
    const o = overviewOf([record('1', 'a', null)]);
    expect(o.run).toEqual({ state: 'running', why: '1 episode running: a' });
    expect(o.workers).toEqual([{ worker: 'elsewhere:1', liveness: 'unknown', episodes: 1 }]);
  });

  it('does not count an episode whose worker is gone as running, and says the next run closes it', () => {
    const o = overviewOf([record('1', 'a', null, 'here:42')], 'gone');
    expect(o.run.state).toBe('stale');
    expect(o.episodes.running).toBe(0);
    expect(o.tasks.running).toBe(0);
  });

  it('names the worker whose heartbeat holds a running episode, not the scheduler that opened its record', () => {
    const records = [record('1', 'a', null, 'scheduler-host:99'), record('2', 'b', 'accepted', 'scheduler-host:99')];
    const workers = [{ id: 'w-7', host: 'box-7', pid: 12, concurrency: 2, episodes: ['1', '2'], lastSeen: 0 }];
    // The scheduler's pid is on this host and gone: without the registry the episode looks stale.
    const probe = (w: string): WorkerLiveness => (w === 'scheduler-host:99' ? 'gone' : 'unknown');
    const held = withClusterHolders(records, workers, probe);
    const s = snapshot(held.records);
    const board = buildTaskBoard(s, held.probe);
    expect(board.tasks.find((t) => t.id === 'a')!.running).toMatchObject({ episode: '1', worker: 'w-7', liveness: 'alive' });
    const o = buildOverview(s, board, held.probe, new Date('2026-01-01T12:00:00.000Z'));
    expect(o.running.map((r) => [r.id, r.worker, r.liveness])).toEqual([['1', 'w-7', 'alive']]);
    expect(o.run.state).toBe('running');
    // A final record keeps the worker it recorded; one no heartbeat holds keeps its own name.
    expect(held.records[1]!.worker).toBe('scheduler-host:99');
    expect(withClusterHolders(records, [], probe).records[0]!.worker).toBe('scheduler-host:99');
  });

  it('reports a spent episode budget with the command that lifts it, and the hours used', () => {
    const three = [record('1', 'a', 'rejected'), record('2', 'b', 'rejected'), record('3', 'a', 'accepted')];
    const o = overviewOf(three);
    expect(o.run.state).toBe('budget');
    expect(o.run.why).toContain('genesis budget lift --world /w');
    expect(o.budgets).toEqual([
      { name: 'maxEpisodes', set: 3, lifted: 0, limit: 3, used: 3, unit: 'episodes', spent: true },
      { name: 'maxHours', set: 10, lifted: 0, limit: 10, used: 2, unit: 'hours', spent: false },
    ]);
    // Two lifts: the limit in force is world.yaml's plus both, as genesis run holds it; nothing is spent.
    const lift = (n: number) => ({ at: '2026-01-01T11:00:00.000Z', by: 'me', reason: 'more', raise: { maxEpisodes: n } });
    const lifted = overviewOf(three, 'unknown', [lift(4), lift(8)]);
    expect(lifted.budgets[0]).toEqual({ name: 'maxEpisodes', set: 3, lifted: 12, limit: 15, used: 3, unit: 'episodes', spent: false });
    expect(lifted.run.state).not.toBe('budget');
    expect(o.usage).toEqual({ costUsd: 1.5, inputTokens: 300, outputTokens: 30 });
  });

  it('is idle when tasks could start but no run is going', () => {
    expect(overviewOf([]).run).toEqual({ state: 'idle', why: 'no run is going; 2 tasks can start: genesis run --world /w' });
  });
});
