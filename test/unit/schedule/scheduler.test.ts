import { describe, expect, it } from 'vitest';
import type { TaskSpec } from '../../../src/manifest/schema.js';
import { PathLeases } from '../../../src/queue/memory/path-leases.js';
import { budgetStop, idleStop, pickReadyTasks } from '../../../src/schedule/scheduler.js';
import { deriveTaskStatuses, type EpisodeFacts } from '../../../src/schedule/task-status.js';

function task(id: string, dependsOn: string[] = [], paths = [`src/${id}.js`]): TaskSpec {
  return { id, title: id, description: '', acceptance: '', paths, dependsOn, witness: false, review: false, kind: 'build' };
}

function rejected(taskId: string, reason = 'test-failed', message: string | null = '1 test failed'): EpisodeFacts {
  return { task: taskId, status: 'final', outcome: 'rejected', reason, message };
}

const none = new Set<string>();
const always = () => true;
const ids = (tasks: TaskSpec[]) => tasks.map((t) => t.id);

describe('pickReadyTasks', () => {
  it('picks pending tasks without dependencies in manifest order', () => {
    const tasks = [task('c'), task('a'), task('b')];
    const statuses = deriveTaskStatuses(tasks, none, [], none, 3);
    expect(ids(pickReadyTasks(tasks, statuses, 5, always))).toEqual(['c', 'a', 'b']);
  });

  it('respects the free slots', () => {
    const tasks = [task('a'), task('b'), task('c')];
    const statuses = deriveTaskStatuses(tasks, none, [], none, 3);
    expect(ids(pickReadyTasks(tasks, statuses, 2, always))).toEqual(['a', 'b']);
    expect(pickReadyTasks(tasks, statuses, 0, always)).toEqual([]);
  });

  it('waits until every dependency is done', () => {
    const tasks = [task('a'), task('b'), task('c', ['a', 'b'])];
    expect(ids(pickReadyTasks(tasks, deriveTaskStatuses(tasks, new Set(['a']), [], none, 3), 5, always))).toEqual(['b']);
    expect(ids(pickReadyTasks(tasks, deriveTaskStatuses(tasks, new Set(['a', 'b']), [], none, 3), 5, always))).toEqual(['c']);
  });

  it('does not start a task whose dependency is running or blocked', () => {
    const tasks = [task('a'), task('b'), task('c', ['a']), task('d', ['b'])];
    const statuses = deriveTaskStatuses(tasks, none, [rejected('b')], new Set(['a']), 1);
    expect(pickReadyTasks(tasks, statuses, 5, always)).toEqual([]);
  });

  it('skips running, done and blocked tasks', () => {
    const tasks = [task('run'), task('done'), task('blocked'), task('free')];
    const statuses = deriveTaskStatuses(tasks, new Set(['done']), [rejected('blocked')], new Set(['run']), 1);
    expect(ids(pickReadyTasks(tasks, statuses, 5, always))).toEqual(['free']);
  });

  it('skips a task that cannot lease its paths and tries the next one', () => {
    const tasks = [task('a'), task('b'), task('c')];
    const statuses = deriveTaskStatuses(tasks, none, [], none, 3);
    const asked: string[] = [];
    const picked = pickReadyTasks(tasks, statuses, 2, (t) => {
      asked.push(t.id);
      return t.id !== 'a';
    });
    expect(ids(picked)).toEqual(['b', 'c']);
    expect(asked).toEqual(['a', 'b', 'c']);
  });

  it('never picks two tasks with overlapping paths when leasing as it goes', () => {
    const tasks = [task('lib', [], ['src/lib']), task('util', [], ['src/lib/util.js']), task('cli', [], ['bin/**']), task('bin', [], ['bin/calc.js'])];
    const statuses = deriveTaskStatuses(tasks, none, [], none, 3);
    const leases = new PathLeases();
    const picked = pickReadyTasks(tasks, statuses, 4, (t) => leases.tryAcquire(t.id, t.paths));
    expect(ids(picked)).toEqual(['lib', 'cli']);
    expect(leases.holders()).toEqual(['lib', 'cli']);
  });

  it('does not pick a task whose paths a running episode holds', () => {
    const tasks = [task('a', [], ['src']), task('b', [], ['src/b.js']), task('c', [], ['docs'])];
    const leases = new PathLeases();
    leases.tryAcquire('episode-of-a', ['src']);
    const statuses = deriveTaskStatuses(tasks, none, [], new Set(['a']), 3);
    expect(ids(pickReadyTasks(tasks, statuses, 2, (t) => leases.tryAcquire(t.id, t.paths)))).toEqual(['c']);
  });

  it('does not ask for a lease once the slots are full', () => {
    const tasks = [task('a'), task('b')];
    const statuses = deriveTaskStatuses(tasks, none, [], none, 3);
    const asked: string[] = [];
    pickReadyTasks(tasks, statuses, 1, (t) => {
      asked.push(t.id);
      return true;
    });
    expect(asked).toEqual(['a']);
  });
});

describe('budgetStop', () => {
  it('lets episodes start while no budget is set', () => {
    expect(budgetStop({}, 10_000, 10_000)).toBeNull();
  });

  it('lets episodes start while under both budgets', () => {
    expect(budgetStop({ maxEpisodes: 10, maxHours: 2 }, 9, 1.99)).toBeNull();
  });

  it('stops when the started episodes reach maxEpisodes', () => {
    expect(budgetStop({ maxEpisodes: 10 }, 10, 0)).toEqual({ kind: 'budget', budget: 'maxEpisodes', limit: 10, used: 10 });
  });

  it('stops when the hours used reach maxHours, rounding what was used', () => {
    expect(budgetStop({ maxHours: 1.5 }, 0, 1.50123)).toEqual({ kind: 'budget', budget: 'maxHours', limit: 1.5, used: 1.5 });
  });

  it('names the episode budget first when both are spent', () => {
    expect(budgetStop({ maxEpisodes: 1, maxHours: 1 }, 3, 3)).toMatchObject({ budget: 'maxEpisodes', used: 3 });
  });
});

describe('idleStop', () => {
  it('says done when every task is done', () => {
    const tasks = [task('a'), task('b', ['a'])];
    expect(idleStop(tasks, deriveTaskStatuses(tasks, new Set(['a', 'b']), [], none, 3))).toEqual({ kind: 'done' });
  });

  it('says done for a world without tasks', () => {
    expect(idleStop([], new Map())).toEqual({ kind: 'done' });
  });

  it('goes on while a task is running', () => {
    const tasks = [task('a'), task('b')];
    const statuses = deriveTaskStatuses(tasks, new Set(['b']), [], new Set(['a']), 3);
    expect(idleStop(tasks, statuses)).toBeNull();
  });

  it('goes on while a pending task can still run', () => {
    const tasks = [task('a'), task('b')];
    const statuses = deriveTaskStatuses(tasks, none, [rejected('a')], none, 1);
    expect(idleStop(tasks, statuses)).toBeNull();
  });

  it('says blocked with each blocked task, its last reason, and the tasks waiting on it', () => {
    const tasks = [task('a'), task('b', ['a']), task('c', ['b']), task('d'), task('e')];
    const episodes = [
      rejected('a', 'test-failed', '2 tests failed'),
      { task: 'd', status: 'final', outcome: 'failed', reason: 'agent-exit', message: null } as const,
    ];
    const statuses = deriveTaskStatuses(tasks, new Set(['e']), episodes, none, 1);
    expect(idleStop(tasks, statuses)).toEqual({
      kind: 'blocked',
      blocked: [
        { task: 'a', reason: 'test-failed', message: '2 tests failed', outcome: 'rejected' },
        { task: 'd', reason: 'agent-exit', message: null, outcome: 'failed' },
      ],
      waiting: [
        { task: 'b', on: 'a' },
        { task: 'c', on: 'a' },
      ],
    });
  });

  it('says blocked when only blocked and done tasks are left', () => {
    const tasks = [task('a'), task('b')];
    const statuses = deriveTaskStatuses(tasks, new Set(['a']), [rejected('b'), rejected('b')], none, 2);
    expect(idleStop(tasks, statuses)).toEqual({
      kind: 'blocked',
      blocked: [{ task: 'b', reason: 'test-failed', message: '1 test failed', outcome: 'rejected' }],
      waiting: [],
    });
  });
});
