import { describe, expect, it } from 'vitest';
import { type CheckFiles, ownersOfTests } from '../../../../src/gate/attribution/check-owners.js';
import { passingUnder, vanishedTests } from '../../../../src/gate/test-baseline.js';

const A = 'node --test test/a.test.js';
const B = 'node --test test/b.test.js';
const C = 'node --test test/c/';
const script = (...titles: string[]) => `const { test } = require('node:test');\n${titles.map((t) => `test('${t}', () => {});`).join('\n')}\n`;
const check = (command: string, files: Record<string, string | null>): CheckFiles => ({
  command,
  files: Object.entries(files).map(([path, text]) => ({ path, text })),
});
const treeOf = (...checks: CheckFiles[]) => new Map(checks.flatMap((c) => c.files.map((f) => [f.path, 100] as const)));

describe('ownersOfTests', () => {
  it("keeps each test of two checks run together under its own check only, so a reopened task's check alone is held to its own tests", () => {
    const checks = [check(A, { 'test/a.test.js': script('a says a') }), check(B, { 'test/b.test.js': script('b says b') })];
    const owners = ownersOfTests(['a says a', 'b says b'], checks, treeOf(...checks));
    expect(owners).toEqual({ owned: { [A]: ['a says a'], [B]: ['b says b'] }, runAlone: [] });
    // Task a reopened: its check runs alone and reports its own test; b's is not asked of it.
    const base = passingUnder(owners.owned, [A])!;
    expect(base).toEqual(['a says a']);
    expect(vanishedTests(base, { passed: ['a says a'], failed: [] }, false)).toEqual([]);
    // The run together is still held to every test of both.
    expect(passingUnder(owners.owned, [A, B])).toEqual(['a says a', 'b says b']);
  });

  it('gives a test named after a file to the check that holds that file', () => {
    const checks = [check(A, { 'test/a.test.js': script() }), check(C, { 'test/c/one.test.js': script(), 'test/c/two.test.js': script() })];
    const owners = ownersOfTests(['test/c/two.test.js > adds', 'test/a.test.js > subtracts'], checks, treeOf(...checks));
    expect(owners).toEqual({ owned: { [A]: ['test/a.test.js > subtracts'], [C]: ['test/c/two.test.js > adds'] }, runAlone: [] });
  });

  it('runs alone the checks whose files both define a title, and keeps the others', () => {
    const checks = [
      check(A, { 'test/a.test.js': script('works', 'a one') }),
      check(B, { 'test/b.test.js': script('works') }),
      check(C, { 'test/c/c.test.js': script('c one') }),
    ];
    const owners = ownersOfTests(['works', 'works', 'a one', 'c one'], checks, treeOf(...checks));
    expect(owners).toEqual({ owned: { [C]: ['c one'] }, runAlone: [A, B] });
  });

  it('runs every check alone for a test no file of theirs defines: a title made at run time, or one a shared helper registers', () => {
    const checks = [check(A, { 'test/a.test.js': script('a one') }), check(B, { 'test/b.test.js': 'for (const n of [1, 2]) test(`case ${n}`, () => {});' })];
    const owners = ownersOfTests(['a one', 'case 1', 'case 2'], checks, treeOf(...checks));
    expect(owners).toEqual({ owned: {}, runAlone: [A, B] });
    // A name after a file that is none of theirs (a helper beside them) is no one's either.
    expect(ownersOfTests(['test/helper.js > x'], checks, new Map([...treeOf(...checks), ['test/helper.js', 10]])).runAlone).toEqual([A, B]);
  });

  it('takes a file too big to read for one that may define anything', () => {
    const checks = [check(A, { 'test/a.test.js': script('a one') }), check(B, { 'test/b.test.js': null })];
    expect(ownersOfTests(['a one'], checks, treeOf(...checks))).toEqual({ owned: {}, runAlone: [A, B] });
  });

  it('keeps a check that passed none of the tests as holding none', () => {
    const checks = [check(A, { 'test/a.test.js': script('a one') }), check(B, { 'test/b.test.js': script('b one') })];
    expect(ownersOfTests(['a one'], checks, treeOf(...checks))).toEqual({ owned: { [A]: ['a one'], [B]: [] }, runAlone: [] });
  });
});
