import { describe, expect, it } from 'vitest';
import type { TimedEpisodeFacts } from '../../../src/schedule/task-retry-status.js';
import { deriveWorldTaskStatuses } from '../../../src/schedule/world-task-status.js';
import { taskSchema } from '../../../src/manifest/schema.js';

const tasks = ['a', 'b'].map((id) => taskSchema.parse({ id, title: id, paths: [`src/${id}.js`] }));
const manifest = (maxAttempts: number, blockOnRepeat: boolean) => ({ tasks, retry: { maxAttempts, blockOnRepeat } });

function ended(
  task: string,
  outcome: 'rejected' | 'failed' | 'abandoned',
  at: string,
  reason = 'check-failed',
  signature: string | null = null,
): TimedEpisodeFacts {
  return { task, status: 'final', outcome, reason, message: `${reason} at ${at}`, signature, startedAt: at, endedAt: at };
}

const facts = (m: ReturnType<typeof manifest>, episodes: TimedEpisodeFacts[], retries: Array<{ task: string; at: string }> = []) =>
  deriveWorldTaskStatuses({ manifest: m, done: new Set(), episodes, running: new Set(), retries });

describe('the one derivation of task states', () => {
  const repeated = [
    ended('a', 'rejected', '2026-01-01T10:00:00Z', 'check-failed', 'sig-1'),
    ended('a', 'rejected', '2026-01-01T11:00:00Z', 'check-failed', 'sig-1'),
  ];

  it('blocks on the same failure twice when the manifest says retry.blockOnRepeat, and not otherwise', () => {
    expect(facts(manifest(5, true), repeated).get('a')).toMatchObject({ state: 'blocked', repeated: 'sig-1' });
    expect(facts(manifest(5, false), repeated).get('a')).toMatchObject({ state: 'pending' });
  });

  it('blocks a task whose last attempt found the accepted head failing, without charging an attempt', () => {
    const status = facts(manifest(3, true), [ended('a', 'abandoned', '2026-01-01T10:00:00Z', 'broken-base')]).get('a');
    expect(status).toMatchObject({ state: 'blocked', failures: 0, lastReason: 'broken-base', lastMessage: 'broken-base at 2026-01-01T10:00:00Z' });
    expect(facts(manifest(3, true), [ended('a', 'abandoned', '2026-01-01T10:00:00Z', 'replay-broken-base')]).get('a')?.state).toBe('blocked');
  });

  it('does not block for an attempt that was merely interrupted, nor for a broken base followed by a real attempt', () => {
    expect(facts(manifest(3, true), [ended('a', 'abandoned', '2026-01-01T10:00:00Z', 'aborted')]).get('a')?.state).toBe('pending');
    const later = [ended('a', 'abandoned', '2026-01-01T10:00:00Z', 'broken-base'), ended('a', 'rejected', '2026-01-01T11:00:00Z')];
    expect(facts(manifest(3, true), later).get('a')).toMatchObject({ state: 'pending', lastReason: 'check-failed' });
  });

  it('blocks a task whose gate killed the orchestrator twice in a row, and lifts it with a retry marker', () => {
    const crashed = [
      ended('a', 'abandoned', '2026-01-01T10:00:00Z', 'gate-crashed'),
      ended('a', 'failed', '2026-01-01T11:00:00Z', 'poison-pill', 'poison-pill'),
    ];
    expect(facts(manifest(5, false), crashed).get('a')).toMatchObject({ state: 'blocked', failures: 1, lastReason: 'poison-pill' });
    expect(facts(manifest(5, false), crashed.slice(0, 1)).get('a')?.state).toBe('pending');
    expect(facts(manifest(5, false), crashed, [{ task: 'a', at: '2026-01-01T12:00:00Z' }]).get('a')?.state).toBe('pending');
  });

  it('blocks a task whose change, verified on the tip, froze two workers, and lifts it with a retry marker', () => {
    const frozen = [ended('a', 'rejected', '2026-01-01T10:00:00Z', 'replay-poison-pill', 'verification-poison-pill')];
    expect(facts(manifest(5, false), frozen).get('a')).toMatchObject({ state: 'blocked', failures: 1, lastReason: 'replay-poison-pill' });
    expect(facts(manifest(5, false), frozen, [{ task: 'a', at: '2026-01-01T12:00:00Z' }]).get('a')?.state).toBe('pending');
  });

  it('lifts every kind of block with a retry marker newer than the failures', () => {
    const used = [ended('a', 'rejected', '2026-01-01T10:00:00Z'), ended('a', 'failed', '2026-01-01T11:00:00Z')];
    const broken = [ended('b', 'abandoned', '2026-01-01T10:00:00Z', 'broken-base')];
    const before = facts(manifest(2, true), [...used, ...broken]);
    expect([before.get('a')?.state, before.get('b')?.state]).toEqual(['blocked', 'blocked']);
    const retries = [
      { task: 'a', at: '2026-01-01T12:00:00Z' },
      { task: 'b', at: '2026-01-01T12:00:00Z' },
    ];
    const after = facts(manifest(2, true), [...used, ...broken], retries);
    expect([after.get('a')?.state, after.get('b')?.state]).toEqual(['pending', 'pending']);
    expect(facts(manifest(5, true), repeated, [{ task: 'a', at: '2026-01-01T12:00:00Z' }]).get('a')?.state).toBe('pending');
  });
});
