import { describe, expect, it } from 'vitest';
import { loadBaseline, markBaselineFinal, passingUnder, saveBaseline, vanishedTests, waitForBaseline } from '../../../src/gate/test-baseline.js';
import { stableTestName } from '../../../src/gate/reports/cases.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('vanishedTests', () => {
  it('lists tests that passed on the base and are not reported passing', () => {
    expect(vanishedTests(['a', 'b', 'c'], { passed: ['a', 'd'], failed: ['b'] }, false)).toEqual(['b', 'c']);
  });

  it('holds a name listed twice (two files of checks run together) to being reported twice', () => {
    expect(vanishedTests(['a', 'works', 'works'], { passed: ['a', 'works'], failed: [] }, false)).toEqual(['works']);
    expect(vanishedTests(['a', 'works', 'works'], { passed: ['a', 'works', 'works'], failed: [] }, false)).toEqual([]);
  });

  it('in ratchet mode lets a test fail, never vanish', () => {
    expect(vanishedTests(['a', 'b', 'c'], { passed: ['a'], failed: ['b'] }, true)).toEqual(['c']);
  });

  it("holds a runner that names no passing test to its file's count, whatever the candidate's runner names", () => {
    const base = ['f.ts > (passing test 1)', 'f.ts > (passing test 2)', 'f.ts > (passing test 3)', 'g.ts > x'];
    expect(vanishedTests(base, { passed: ['f.ts > (passing test 1)', 'f.ts > (passing test 2)', 'g.ts > x'], failed: [] }, false)).toEqual([
      'f.ts > (passing test 3)',
    ]);
    // Verbose names on the candidate, and in ratchet mode a failing test of the file still counts as reported.
    expect(vanishedTests(base, { passed: ['f.ts > a', 'f.ts > b', 'g.ts > x'], failed: ['f.ts > c'] }, true)).toEqual([]);
    expect(vanishedTests(base, { passed: ['f.ts > a', 'f.ts > b', 'g.ts > x'], failed: ['f.ts > c'] }, false)).toEqual(['f.ts > (passing test 3)']);
  });
});

describe('passingUnder', () => {
  it('gives the names that passed under each of the commands asked for, together', () => {
    expect(passingUnder({ a: ['x', 'y'], b: ['z'], c: ['w'] }, ['a', 'b'])).toEqual(['x', 'y', 'z']);
  });

  it("holds a name two checks each hold twice: the run together reports it once for each check's file", () => {
    expect(passingUnder({ a: ['works', 'x'], b: ['works'], c: ['w'] }, ['a', 'b'])).toEqual(['works', 'works', 'x']);
    expect(passingUnder({ a: ['works'] }, ['a', 'a'])).toEqual(['works']);
  });

  it('knows a command that passed nothing, and nothing of commands never stored', () => {
    expect(passingUnder({ a: [] }, ['a', 'b'])).toEqual([]);
    expect(passingUnder({ a: ['x'] }, ['b', 'c'])).toBeUndefined();
    // An inherited name is not a stored command.
    expect(passingUnder({}, ['toString'])).toBeUndefined();
  });
});

describe('stableTestName', () => {
  it('blanks what differs between two runs of one test, and keeps parameters apart', () => {
    expect(stableTestName('test_obj[<Foo object at 0x7f3a2b1c4d50>]')).toBe(stableTestName('test_obj[<Foo object at 0x7fe0aa01bb10>]'));
    expect(stableTestName('reads /tmp/pytest-of-u/pytest-3/data.txt')).toBe('reads …');
    expect(stableTestName('test_add[1-2]')).not.toBe(stableTestName('test_add[2-3]'));
  });

  it('blanks the time a title printed, as JavaScript prints a date', () => {
    const now = new Date(Date.UTC(2026, 11, 7, 15, 57, 41, 376));
    const later = new Date(now.getTime() + 5_000);
    for (const print of [(d: Date) => d.toISOString(), (d: Date) => String(d)]) {
      const title = (d: Date) => `toPrimitive(${print(d)}) returns the string version of the date`;
      expect(stableTestName(title(now))).toBe(stableTestName(title(later)));
      expect(stableTestName(title(now))).toBe('toPrimitive((time)) returns the string version of the date');
    }
    expect(stableTestName('parses 2026-12-07')).toBe('parses 2026-12-07');
  });

  it("reads tape 4's name of a message-less assertion as tape 5's, so a move to tape 5 renames none", () => {
    expect(stableTestName('should be equivalent')).toBe(stableTestName('should be deeply equivalent'));
    expect(stableTestName('should be equal')).toBe('should be strictly equal');
    expect(stableTestName('should be equal, roughly')).toBe('should be equal, roughly');
  });
});

describe('baselines on disk', () => {
  it('adds commands to what a tree has, and reads nothing for an unknown tree', async () => {
    const dir = await tempDir();
    await saveBaseline(dir, 'abc', { 'node --test': ['a'] });
    await saveBaseline(dir, 'abc', { pytest: ['t1', 't2'] });
    expect(await loadBaseline(dir, 'abc')).toEqual({ 'node --test': ['a'], pytest: ['t1', 't2'] });
    expect(await loadBaseline(dir, 'def')).toEqual({});
  });

  it('waits for a baseline the gate judging that tree stores later, holding every command asked for', async () => {
    const dir = await tempDir();
    await saveBaseline(dir, 'tip', { 'node --test': ['a'] });
    setTimeout(() => void saveBaseline(dir, 'tip', { 'node --test check': ['c'] }), 150);
    const t0 = Date.now();
    expect(await waitForBaseline(dir, 'tip', ['node --test', 'node --test check'], Date.now() + 5000, 20)).toEqual({
      'node --test': ['a'],
      'node --test check': ['c'],
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
  });

  it('stops waiting when the gate of that tree failed, or at the deadline', async () => {
    const dir = await tempDir();
    setTimeout(() => void markBaselineFinal(dir, 'bad'), 100);
    expect(await waitForBaseline(dir, 'bad', ['node --test'], Date.now() + 5000, 20)).toBeNull();
    const t0 = Date.now();
    expect(await waitForBaseline(dir, 'never', ['node --test'], Date.now() + 200, 20)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
