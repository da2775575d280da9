import { describe, expect, it } from 'vitest';
import { formatWorkerLine } from '../../../src/cli/commands/worker/event-lines.js';

const AT = new Date('2026-01-01T10:20:30Z');

describe("genesis worker's lines", () => {
  it('label every line with the worker id, in text and in JSON', () => {
    expect(formatWorkerLine('h:12:ab', { type: 'start', episodeId: 'e1', task: 'a' }, false, AT)).toBe('10:20:30 [h:12:ab] ▶ episode e1 (task a)\n');
    expect(JSON.parse(formatWorkerLine('h:12:ab', { type: 'start', episodeId: 'e1', task: 'a' }, true, AT))).toEqual({
      type: 'start',
      episodeId: 'e1',
      task: 'a',
      worker: 'h:12:ab',
      at: AT.getTime(),
    });
  });

  it('say when the worker takes over a job another worker had, naming it when known', () => {
    expect(formatWorkerLine('w2', { type: 'takeover', episodeId: 'e1', task: 'a', from: 'w1' }, false, AT)).toBe(
      '10:20:30 [w2] takes over episode e1 (task a) from worker w1, which stopped, stalled or handed it back\n',
    );
    expect(formatWorkerLine('w2', { type: 'takeover', episodeId: 'e1', task: 'a', from: null }, false, AT)).toContain(
      'takes over episode e1 (task a): its job ran before',
    );
  });

  it('print the ready line as a sentence, not a list of values', () => {
    const line = formatWorkerLine(
      'w1',
      { type: 'ready', worker: 'w1', concurrency: 2, redis: 'redis://r', sandboxes: ['docker', 'bwrap'], agentSandbox: 'bwrap', preflightMs: 40 },
      false,
      AT,
    );
    expect(line).toBe('10:20:30 [w1] ready: 2 at a time from redis://r; gate sandboxes docker, bwrap, agent sandbox bwrap (checked in 40 ms)\n');
  });

  it('say what a task waits on and for how long so far', () => {
    expect(
      formatWorkerLine('w1', { type: 'waiting', task: 'versions', what: 'dependency set b82a7419a6af being installed (npm ci)', ms: 35_400 }, false, AT),
    ).toBe('10:20:30 [w1]   task versions waits for dependency set b82a7419a6af being installed (npm ci) (35s so far)\n');
  });

  it('tell a calibration gate by its name and world, and its verdict as a measurement', () => {
    expect(formatWorkerLine('w1', { type: 'calibrate-start', episodeId: 'mutant-3', task: 'lib' }, false, AT)).toBe(
      '10:20:30 [w1] ▶ calibration gate mutant-3 of world lib\n',
    );
    expect(formatWorkerLine('w1', { type: 'calibrate-end', episodeId: 'mutant-3', task: 'lib', verdict: 'test-failed' }, false, AT)).toBe(
      '10:20:30 [w1] ■ calibration gate mutant-3 of world lib: rejected (test-failed)\n',
    );
    expect(formatWorkerLine('w1', { type: 'calibrate-end', episodeId: 'replay-ab-1', task: 'lib', verdict: 'passed' }, false, AT)).toContain(
      'replay-ab-1 of world lib: accepted',
    );
  });
});
