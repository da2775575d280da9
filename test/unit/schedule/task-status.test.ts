import { describe, expect, it } from 'vitest';
import type { TaskSpec } from '../../../src/manifest/schema.js';
import { deriveTaskStatuses, tasksWaitingOnBlocked, type EpisodeFacts, type TaskStatus } from '../../../src/schedule/task-status.js';

function task(id: string, dependsOn: string[] = [], paths = [`src/${id}.js`]): TaskSpec {
  return { id, title: id, description: '', acceptance: '', paths, dependsOn, witness: false, review: false, kind: 'build' };
}

function ended(
  taskId: string,
  outcome: NonNullable<EpisodeFacts['outcome']>,
  reason: string | null = `${outcome}-reason`,
  message: string | null = null,
): EpisodeFacts {
  return { task: taskId, status: 'final', outcome, reason, message };
}

function runningEpisode(taskId: string): EpisodeFacts {
  return { task: taskId, status: 'running', outcome: null, reason: null, message: null };
}

function states(statuses: ReadonlyMap<string, TaskStatus>): Record<string, string> {
  return Object.fromEntries([...statuses].map(([id, s]) => [id, s.state]));
}

const none = new Set<string>();

describe('deriveTaskStatuses', () => {
  it('has every task pending in a fresh world, in manifest order', () => {
    const statuses = deriveTaskStatuses([task('b'), task('a')], none, [], none, 3);
    expect([...statuses.keys()]).toEqual(['b', 'a']);
    expect(statuses.get('a')).toEqual({ id: 'a', state: 'pending', failures: 0, lastReason: null, lastMessage: null, lastOutcome: null });
  });

  it('takes done from the accepted history, whatever the ledger says', () => {
    const episodes = [ended('a', 'rejected'), ended('a', 'rejected'), ended('a', 'rejected')];
    const statuses = deriveTaskStatuses([task('a')], new Set(['a']), episodes, new Set(['a']), 3);
    expect(statuses.get('a')).toMatchObject({ state: 'done', failures: 3 });
  });

  it('does not call a task done because the ledger has an accepted episode the history lacks', () => {
    const statuses = deriveTaskStatuses([task('a')], none, [ended('a', 'accepted')], none, 3);
    expect(statuses.get('a')).toMatchObject({ state: 'pending', failures: 0 });
  });

  it('marks a task running while an episode works on it', () => {
    const statuses = deriveTaskStatuses([task('a'), task('b')], none, [runningEpisode('a')], new Set(['a']), 3);
    expect(states(statuses)).toEqual({ a: 'running', b: 'pending' });
  });

  it('blocks a task after maxAttempts rejected or failed attempts, keeping the last reason', () => {
    const episodes = [ended('a', 'rejected', 'test-failed', '2 tests failed'), ended('b', 'rejected'), ended('a', 'failed', 'agent-exit', 'exit 1')];
    const statuses = deriveTaskStatuses([task('a'), task('b')], none, episodes, none, 2);
    expect(statuses.get('a')).toEqual({ id: 'a', state: 'blocked', failures: 2, lastReason: 'agent-exit', lastMessage: 'exit 1', lastOutcome: 'failed' });
    expect(statuses.get('b')).toMatchObject({ state: 'pending', failures: 1, lastReason: 'rejected-reason' });
  });

  it('keeps a task pending one failure short of maxAttempts', () => {
    const statuses = deriveTaskStatuses([task('a')], none, [ended('a', 'rejected'), ended('a', 'rejected')], none, 3);
    expect(statuses.get('a')).toMatchObject({ state: 'pending', failures: 2 });
  });

  it('does not count abandoned attempts towards blocking', () => {
    const episodes = [
      ended('a', 'abandoned', 'aborted'),
      ended('a', 'abandoned', 'aborted'),
      ended('a', 'abandoned', 'aborted'),
      ended('a', 'rejected', 'test-failed'),
    ];
    const statuses = deriveTaskStatuses([task('a')], none, episodes, none, 2);
    expect(statuses.get('a')).toMatchObject({ state: 'pending', failures: 1, lastReason: 'test-failed' });
  });

  it('does not count episodes still running, nor accepted ones, as failures', () => {
    const statuses = deriveTaskStatuses([task('a')], none, [runningEpisode('a'), ended('a', 'accepted')], none, 1);
    expect(statuses.get('a')).toMatchObject({ state: 'pending', failures: 0, lastReason: null });
  });

  it('shows a blocked task as running while a further episode is in flight', () => {
    const statuses = deriveTaskStatuses([task('a')], none, [ended('a', 'rejected')], new Set(['a']), 1);
    expect(statuses.get('a')).toMatchObject({ state: 'running', failures: 1 });
  });

  it('ignores episodes of tasks the manifest no longer has', () => {
    const statuses = deriveTaskStatuses([task('a')], none, [ended('gone', 'rejected')], none, 1);
    expect([...statuses.keys()]).toEqual(['a']);
    expect(statuses.get('a')!.state).toBe('pending');
  });
});

describe('tasksWaitingOnBlocked', () => {
  const tasks = [task('a'), task('b', ['a']), task('c', ['b']), task('d'), task('e', ['d'])];

  it('finds pending tasks waiting directly or transitively on a blocked task, naming the blocker', () => {
    const statuses = deriveTaskStatuses(tasks, none, [ended('a', 'rejected')], none, 1);
    expect(tasksWaitingOnBlocked(tasks, statuses)).toEqual(
      new Map([
        ['b', 'a'],
        ['c', 'a'],
      ]),
    );
  });

  it('is empty when nothing is blocked', () => {
    const statuses = deriveTaskStatuses(tasks, none, [], none, 1);
    expect(tasksWaitingOnBlocked(tasks, statuses).size).toBe(0);
  });

  it('leaves out tasks that are not pending', () => {
    const statuses = deriveTaskStatuses(tasks, new Set(['c']), [ended('a', 'rejected')], new Set(['b']), 1);
    expect([...tasksWaitingOnBlocked(tasks, statuses).keys()]).toEqual([]);
  });

  it('names the nearest blocked task when several are on the way', () => {
    const chain = [task('a'), task('b', ['a']), task('c', ['b'])];
    const statuses = deriveTaskStatuses(chain, none, [ended('a', 'rejected'), ended('b', 'rejected')], none, 1);
    expect(tasksWaitingOnBlocked(chain, statuses)).toEqual(new Map([['c', 'b']]));
  });

  it('terminates on a dependency cycle', () => {
    const cyclic = [task('a', ['b']), task('b', ['a'])];
    const statuses = deriveTaskStatuses(cyclic, none, [], none, 1);
    expect(tasksWaitingOnBlocked(cyclic, statuses).size).toBe(0);
  });
});
