import { describe, expect, it } from 'vitest';
import type { TaskSpec } from '../../../src/manifest/schema.js';
import type { EpisodeSummary } from '../../../src/ledger/summary.js';
import { episodesOfTask, policyLedgerOf, withRecord } from '../../../src/schedule/policy-ledger.js';
import { initialPolicyState, taskStatuses } from '../../../src/schedule/run-policy.js';
import { deriveWorldTaskStatuses } from '../../../src/schedule/world-task-status.js';

const T0 = Date.parse('2026-12-01T10:00:00Z');

function episode(n: number, task: string, extra: Partial<EpisodeSummary> = {}): EpisodeSummary {
  return {
    id: `20261201-100000-${String(n).padStart(6, '0')}`,
    task,
    attempt: 1,
    status: 'final',
    outcome: 'rejected',
    reason: 'test-failed',
    message: `failed ${n}`,
    signature: `sig-${n % 3}`,
    startedAt: new Date(T0 + n * 1000).toISOString(),
    endedAt: new Date(T0 + n * 1000 + 500).toISOString(),
    usage: { inputTokens: n, outputTokens: 1, costUsd: n / 1000 },
    commit: null,
    ...extra,
  };
}

const task = (id: string): TaskSpec => ({ id, title: id, paths: [`${id}/**`], dependsOn: [] }) as unknown as TaskSpec;

describe('the policy ledger', () => {
  it('keeps the totals a recount would give as records are added and replaced', () => {
    const records = Array.from({ length: 40 }, (_, i) => episode(i + 1, `t${i % 4}`));
    let ledger = policyLedgerOf(records.slice(0, 30));
    for (const r of records.slice(30)) ledger = withRecord(ledger, r);
    // Closing records again with other usage (a final record replacing an open one, say).
    const replaced = [episode(3, 't2', { usage: { inputTokens: 1000, outputTokens: 0, costUsd: 2 } }), episode(35, 't2', { usage: null })];
    for (const r of replaced) ledger = withRecord(ledger, r);
    const all = records.map((r) => replaced.find((x) => x.id === r.id) ?? r);
    const recount = policyLedgerOf(all);
    expect(ledger.count).toBe(recount.count);
    expect(ledger.firstStartMs).toBe(recount.firstStartMs);
    expect(ledger.spent.tokens).toBe(recount.spent.tokens);
    expect(ledger.spent.costUsd).toBeCloseTo(recount.spent.costUsd, 9);
    for (const t of ['t0', 't1', 't2', 't3']) expect(episodesOfTask(ledger, t)).toEqual(episodesOfTask(recount, t));
  });

  it('gives every task not done the status the whole ledger gives it, whatever the history of done and unknown tasks holds', () => {
    const history = Array.from({ length: 500 }, (_, i) => episode(i + 1, i % 2 ? `old-${i}` : 'done-task', { outcome: i % 5 ? 'rejected' : 'accepted' }));
    const pending = [
      episode(1001, 'a'),
      episode(1002, 'b', { signature: 'same' }),
      episode(1003, 'b', { signature: 'same' }),
      episode(1004, 'c', { outcome: 'abandoned', reason: 'broken-base' }),
    ];
    const tasks = [task('a'), task('b'), task('c'), task('d'), task('done-task')];
    const done = new Set(['done-task']);
    const records = [...history, ...pending];
    const state = initialPolicyState({
      config: { parallelism: 2, maxAttempts: 3, blockOnRepeat: true, budgets: { maxEpisodes: 10_000 }, distributed: false },
      tasks,
      done,
      records,
      now: T0 + 2_000_000,
    });
    const whole = deriveWorldTaskStatuses({
      manifest: { tasks, retry: { maxAttempts: 3, blockOnRepeat: true } },
      done,
      episodes: records,
      running: new Set(),
      retries: [],
    });
    const decided = taskStatuses(state);
    for (const id of ['a', 'b', 'c', 'd']) expect(decided.get(id)).toEqual(whole.get(id));
    expect(decided.get('done-task')?.state).toBe('done');
    expect(decided.get('b')).toMatchObject({ state: 'blocked', repeated: 'same' });
    expect(state.ledger.count).toBe(504);
  });
});
