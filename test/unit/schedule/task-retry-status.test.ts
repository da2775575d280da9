import { describe, expect, it } from 'vitest';
import { countFailuresSinceRetry, deriveTaskStatusesWithRetries, episodesSinceRetry, type TimedEpisodeFacts } from '../../../src/schedule/task-retry-status.js';
import { taskSchema, type TaskSpec } from '../../../src/manifest/schema.js';

// Through the schema, so defaults added to tasks later are filled in here too.
const task = (id: string): TaskSpec => taskSchema.parse({ id, title: id, paths: [`src/${id}.js`] });

function ended(taskId: string, outcome: 'accepted' | 'rejected' | 'failed' | 'abandoned', at: string): TimedEpisodeFacts {
  return { task: taskId, status: 'final', outcome, reason: outcome === 'accepted' ? null : 'check-failed', message: null, startedAt: at, endedAt: at };
}

const failures = [ended('a', 'rejected', '2026-01-01T10:00:00Z'), ended('a', 'failed', '2026-01-01T11:00:00Z')];

describe('failures since the latest retry', () => {
  it('counts every failure of a task that was never retried, and no abandoned attempt', () => {
    expect(countFailuresSinceRetry('a', [...failures, ended('a', 'abandoned', '2026-01-01T12:00:00Z')], [])).toBe(2);
  });

  it('forgets failures that ended at or before the latest retry of that task only', () => {
    const later = ended('a', 'rejected', '2026-01-01T13:00:00Z');
    const retries = [
      { task: 'a', at: '2026-01-01T09:00:00Z' },
      { task: 'a', at: '2026-01-01T11:00:00Z' },
      { task: 'b', at: '2026-01-01T23:00:00Z' },
    ];
    expect(countFailuresSinceRetry('a', [...failures, later], retries)).toBe(1);
    expect(episodesSinceRetry([...failures, later, ended('c', 'rejected', '2026-01-01T10:00:00Z')], retries).map((e) => e.endedAt)).toEqual([
      '2026-01-01T13:00:00Z',
      '2026-01-01T10:00:00Z',
    ]);
  });

  it('keeps an episode that was still running when the retry came', () => {
    const running: TimedEpisodeFacts = {
      task: 'a',
      status: 'running',
      outcome: null,
      reason: null,
      message: null,
      startedAt: '2026-01-01T10:00:00Z',
      endedAt: null,
    };
    expect(episodesSinceRetry([running], [{ task: 'a', at: '2026-01-01T11:00:00Z' }])).toEqual([running]);
  });
});

describe('task statuses with retries', () => {
  it('turns a blocked task pending after a retry while its attempt count keeps growing', () => {
    const before = deriveTaskStatusesWithRetries([task('a')], new Set(), failures, new Set(), 2, []);
    expect(before.get('a')).toMatchObject({ state: 'blocked', failures: 2, failuresSinceRetry: 2, retriedAt: null });
    const after = deriveTaskStatusesWithRetries([task('a')], new Set(), failures, new Set(), 2, [{ task: 'a', at: '2026-01-01T12:00:00Z', note: 'fixed' }]);
    expect(after.get('a')).toMatchObject({
      state: 'pending',
      failures: 2,
      failuresSinceRetry: 0,
      retriedAt: '2026-01-01T12:00:00Z',
      retryNote: 'fixed',
      lastReason: 'check-failed',
    });
  });

  it('blocks a retried task again once it used up its new attempts', () => {
    const again = [...failures, ended('a', 'rejected', '2026-01-02T00:00:00Z'), ended('a', 'rejected', '2026-01-02T01:00:00Z')];
    const statuses = deriveTaskStatusesWithRetries([task('a')], new Set(), again, new Set(), 2, [{ task: 'a', at: '2026-01-01T12:00:00Z' }]);
    expect(statuses.get('a')).toMatchObject({ state: 'blocked', failures: 4, failuresSinceRetry: 2 });
  });
});
