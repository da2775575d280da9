import { describe, expect, it } from 'vitest';
import { describeStop, formatRunEvent, formatSummary } from '../../../src/cli/run-reporter.js';
import { STOP_EXIT } from '../../../src/cli/exit-codes.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import type { StopReason } from '../../../src/schedule/scheduler.js';

const HEAD = '0123456789abcdef0123456789abcdef01234567';
const COMMIT = 'fedcba9876543210fedcba9876543210fedcba98';
const CLOCK = /^\d\d:\d\d:\d\d /;

/** The line without its leading time of day. */
function line(event: RunEvent): string {
  const text = formatRunEvent(event);
  expect(text).toMatch(CLOCK);
  return text!.replace(CLOCK, '');
}

describe('formatRunEvent', () => {
  it('reports the start with the short head, tasks done and the setup', () => {
    expect(line({ type: 'start', world: 'calc', head: HEAD, sandbox: 'bwrap', agent: 'script', tasks: 5, done: 2, recovered: 0, parallelism: 2 })).toBe(
      'world calc at 0123456789ab: 2/5 tasks done; sandbox bwrap, agent script, parallelism 2',
    );
  });

  it('says how many episodes of an earlier run it closed', () => {
    expect(line({ type: 'start', world: 'calc', head: HEAD, sandbox: 'bwrap', agent: 'script', tasks: 5, done: 2, recovered: 3, parallelism: 2 })).toMatch(
      /; closed 3 episodes left running by an earlier run$/,
    );
  });

  it('reports an episode starting', () => {
    expect(line({ type: 'episode-start', id: 'e1', task: 'add', attempt: 2 })).toBe('▶ add attempt 2  (episode e1)');
  });

  it('prints nothing for a phase change or for the stop event', () => {
    expect(formatRunEvent({ type: 'episode-phase', id: 'e1', task: 'add', phase: 'gate' })).toBeNull();
    expect(formatRunEvent({ type: 'stop', reason: { kind: 'done' } })).toBeNull();
  });

  describe('when an episode ends', () => {
    const end = { type: 'episode-end', id: 'e1', task: 'add', attempt: 1, durationMs: 12_345 } as const;

    it('shows an accepted episode with its short commit', () => {
      expect(line({ ...end, outcome: 'accepted', reason: null, message: null, commit: COMMIT })).toBe('✓ add attempt 1 accepted as fedcba987654  [12.3s]');
    });

    it('says when an accepted change was replayed on a newer head', () => {
      expect(line({ ...end, outcome: 'accepted', reason: 'replayed', message: null, commit: COMMIT })).toContain(
        'accepted as fedcba987654 (replayed on a newer head)',
      );
    });

    it('shows a rejected episode with its reason and message', () => {
      expect(line({ ...end, outcome: 'rejected', reason: 'test-failed', message: '1 of 3 tests failed', commit: null })).toBe(
        '✗ add attempt 1 rejected: test-failed: 1 of 3 tests failed  [12.3s]',
      );
    });

    it('marks a failed episode as a failure and an abandoned one apart', () => {
      expect(line({ ...end, outcome: 'failed', reason: 'agent-exit', message: null, commit: null })).toMatch(/^✗ add attempt 1 failed: agent-exit: /);
      expect(line({ ...end, outcome: 'abandoned', reason: 'aborted', message: 'stopped', commit: null })).toMatch(
        /^– add attempt 1 abandoned: aborted: stopped/,
      );
    });
  });

  it('reports the evidence check', () => {
    expect(line({ type: 'evidence', commit: HEAD, passed: false, command: 'npm test' })).toBe('evidence "npm test" on 0123456789ab: not yet');
    expect(line({ type: 'evidence', commit: HEAD, passed: true, command: 'npm test' })).toBe('evidence "npm test" on 0123456789ab: passes');
  });

  it('reports progress with what is running, or a dash', () => {
    expect(line({ type: 'progress', done: 1, tasks: 5, running: ['mul', 'tokenize'], accepted: 1, rejected: 2, failed: 0 })).toBe(
      '  tasks 1/5 done · accepted 1 · rejected 2 · failed 0 · running: mul, tokenize',
    );
    expect(line({ type: 'progress', done: 5, tasks: 5, running: [], accepted: 5, rejected: 0, failed: 0 })).toMatch(/running: -$/);
  });
});

describe('describeStop', () => {
  it('says all tasks are done', () => {
    expect(describeStop({ kind: 'done' })).toBe('stopped: all tasks are done');
  });

  it("says the goal's evidence passes, with its command", () => {
    expect(describeStop({ kind: 'evidence', command: 'node --test test/' })).toBe("stopped: the goal's evidence passes (node --test test/)");
  });

  it('says which budget is spent and which setting to raise', () => {
    expect(describeStop({ kind: 'budget', budget: 'maxEpisodes', limit: 10, used: 10 })).toBe(
      'stopped: budget maxEpisodes spent (10 of 10); lift it with genesis budget lift --reason "…" (or raise goal.stop.maxEpisodes in world.yaml) to go on',
    );
    expect(describeStop({ kind: 'budget', budget: 'maxHours', limit: 2, used: 2.01 })).toContain('raise goal.stop.maxHours');
  });

  it('says an interrupted run resumes when run again', () => {
    expect(describeStop({ kind: 'interrupted' })).toBe('stopped by the user; run again to resume');
  });

  describe('when tasks are blocked', () => {
    const stop: StopReason = {
      kind: 'blocked',
      blocked: [
        { task: 'tokenize', reason: 'test-failed', message: '2 of 5 tests failed' },
        { task: 'mul', reason: 'agent-exit', message: null },
      ],
      waiting: [{ task: 'evaluate', on: 'tokenize' }],
    };

    it('lists each blocked task with its last reason and each task waiting on one', () => {
      expect(describeStop(stop).split('\n').slice(0, 4)).toEqual([
        'stopped: the remaining tasks are blocked',
        '  tokenize: used its attempts; last: test-failed: 2 of 5 tests failed',
        '  mul: used its attempts; last: agent-exit: ',
        '  evaluate: waits for tokenize, which is blocked',
      ]);
    });

    it('says what to do next: inspect the failed episodes, fix the task, and run again', () => {
      const text = describeStop(stop);
      expect(text).toMatch(/(genesis|bin\/genesis\.js) (episodes|show)/);
      expect(text).toMatch(/run again/);
    });

    it("names the lists that hold the blocked tasks' failures, by the outcome each ended with", () => {
      const next = (blocked: Extract<StopReason, { kind: 'blocked' }>['blocked']) =>
        describeStop({ kind: 'blocked', blocked, waiting: [] })
          .split('\n')
          .find((l) => l.includes('next:'))!;
      const failed = next([{ task: 'mul', reason: 'agent-exit', message: null, outcome: 'failed' }]);
      expect(failed).toMatch(/episodes --task mul --outcome failed, /);
      expect(failed).not.toContain('--outcome rejected');
      const both = next([
        { task: 'mul', reason: 'agent-exit', message: null, outcome: 'failed' },
        { task: 'tokenize', reason: 'test-failed', message: null, outcome: 'rejected' },
      ]);
      expect(both).toMatch(/episodes --outcome failed, .*episodes --outcome rejected, /);
      expect(next([{ task: 'mul', reason: 'broken-base', message: null }])).toMatch(/episodes --task mul, /);
    });
  });

  it('describes every stop kind, and each kind has an exit code', () => {
    const stops: StopReason[] = [
      { kind: 'done' },
      { kind: 'evidence', command: 'x' },
      { kind: 'blocked', blocked: [], waiting: [] },
      { kind: 'budget', budget: 'maxHours', limit: 1, used: 1 },
      { kind: 'interrupted' },
      { kind: 'awaiting-review', episodes: [{ id: 'e1', task: 'release' }] },
    ];
    for (const stop of stops) {
      expect(describeStop(stop)).toMatch(/^stopped/);
      expect(STOP_EXIT[stop.kind]).toEqual(expect.any(Number));
    }
    expect(new Set([STOP_EXIT.blocked, STOP_EXIT.budget, STOP_EXIT.interrupted, STOP_EXIT.done]).size).toBe(4);
  });
});

describe('formatSummary', () => {
  it('follows the stop description with the tally of this run', () => {
    const text = formatSummary({
      stop: { kind: 'done' },
      head: HEAD,
      episodes: 7,
      accepted: 5,
      rejected: 1,
      failed: 1,
      abandoned: 0,
      outrun: 0,
      durationMs: 61_500,
      evidence: null,
    });
    expect(text).toBe('stopped: all tasks are done\n7 episodes this run: 5 accepted, 1 rejected by the gate, 1 failed, 0 abandoned; head 0123456789ab; 61.5s');
  });
});
