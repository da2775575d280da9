import { describe, expect, it } from 'vitest';
import { formatWait, WaitBoard } from '../../../src/cli/wait-board.js';

describe('WaitBoard', () => {
  it('tells a wait once it has lasted a few seconds, then every half minute, and no more once it ended', () => {
    const board = new WaitBoard(5000, 30_000);
    board.note('e1', 'versions', 'dependency set 4dbcfef71459 being installed (npm ci)', 0);
    expect(board.due(4000)).toEqual([]);
    expect(board.due(5000)).toEqual([{ task: 'versions', what: 'dependency set 4dbcfef71459 being installed (npm ci)', ms: 5000 }]);
    expect(board.due(6000)).toEqual([]);
    expect(board.due(35_000).map((w) => w.ms)).toEqual([35_000]);
    board.note('e1', 'versions', null, 36_000);
    expect(board.due(90_000)).toEqual([]);
    expect(board.current(90_000)).toEqual([]);
  });

  it('starts the clock again when the same job waits on something else', () => {
    const board = new WaitBoard(5000, 30_000);
    board.note('e1', 'case', 'the test baseline of the tip 20d80cbfe899', 0);
    board.note('e1', 'case', 'the test baseline of the tip 20d80cbfe899', 3000);
    expect(board.current(6000)[0]!.ms).toBe(6000);
    board.note('e1', 'case', 'the tests of 20d80cbfe899 run once', 7000);
    expect(board.due(8000)).toEqual([]);
    expect(board.current(8000)).toEqual([{ task: 'case', what: 'the tests of 20d80cbfe899 run once', ms: 1000 }]);
  });

  it('prints what a task waits on and for how long so far', () => {
    const line = formatWait({ task: 'case', what: 'the test baseline of the tip 20d80cbfe899', ms: 12_400 }, new Date('2026-01-01T10:11:12Z'));
    expect(line).toBe('10:11:12 … case waits for the test baseline of the tip 20d80cbfe899 (12s so far)');
  });
});
