import { describe, expect, it } from 'vitest';
import { findJavaScriptSites, maskNonCode } from '../../../../../src/operations/calibrate/mutants/javascript.js';
import { applyMutation } from '../../../../../src/operations/calibrate/mutants/site.js';

const SOURCE = [
  "var defaults = { a: 'x === y' };", // 1: the operator is inside a string
  'function f(a, b) {',
  '  if (a > 0 && b) return a + 1;', // 3
  '  // a < b in a comment',
  '  count = count * 2;', // 5
  '  return false;', // 6
  '}',
].join('\n');

describe('mutation sites', () => {
  it('finds operators, constants, conditions and statements, never inside strings or comments', () => {
    const sites = findJavaScriptSites('index.js', SOURCE, null);
    const on = (line: number) => sites.filter((s) => s.line === line).map((s) => `${s.kind}: ${s.after.trim()}`.trim());
    expect(on(1)).toEqual([]);
    expect(on(4)).toEqual([]);
    expect(on(3)).toEqual(
      expect.arrayContaining([
        'operator: if (a >= 0 && b) return a + 1;',
        'operator: if (a > 0 || b) return a + 1;',
        'operator: if (a > 0 && b) return a - 1;',
        'constant: if (a > 1 && b) return a + 1;',
        'constant: if (a > 0 && b) return a + 0;',
        'condition: if (!(a > 0 && b)) return a + 1;',
      ]),
    );
    expect(on(5)).toEqual(expect.arrayContaining(['operator: count = count / 2;', 'constant: count = count * 3;', 'statement:']));
    expect(on(6)).toEqual(['constant: return true;', 'statement:']);
  });

  it('keeps to the lines the tests execute when they are known', () => {
    const sites = findJavaScriptSites('index.js', SOURCE, new Set([5]));
    expect(new Set(sites.map((s) => s.line))).toEqual(new Set([5]));
  });

  it('applies one site to its line alone', () => {
    const site = findJavaScriptSites('index.js', SOURCE, new Set([6])).find((s) => s.kind === 'constant');
    const mutated = applyMutation(SOURCE, site!);
    expect(mutated.split('\n')[5]).toBe('  return true;');
    expect(mutated.split('\n').filter((line, i) => line !== SOURCE.split('\n')[i])).toHaveLength(1);
  });

  it('masks strings, templates and comments with their offsets kept', () => {
    const text = "a = 'b + c'; /* d\n* e */ `f ${g}` // h\nx";
    const masked = maskNonCode(text);
    expect(masked).toHaveLength(text.length);
    expect(masked).not.toMatch(/[bcdefgh]/);
    expect(masked.split('\n')[2]).toBe('x');
  });

  it('mutates TypeScript code but never a line that only declares a type', () => {
    const ts = [
      'export interface Options {', // 1
      '  limit: number;', // 2
      '  parse?(text: string): boolean;', // 3
      '  [key: string]: unknown;', // 4
      '}',
      'export type Mode = 1 | 2;', // 6
      'export function clamp(n: number, o: Options): number {', // 7
      '  const max: number = o.limit + 1;', // 8
      '  if (n > max) return max;', // 9
      '  total = total + n;', // 10
      '  return n;',
      '}',
    ].join('\n');
    const sites = findJavaScriptSites('src/clamp.ts', ts, null);
    expect([...new Set(sites.map((s) => s.line))].sort((a, b) => a - b)).toEqual([8, 9, 10, 11]);
    expect(sites.filter((s) => s.line === 10).map((s) => s.kind)).toEqual(['operator', 'statement']);
    // The same line in JavaScript would be removed: only TypeScript has type-only lines.
    expect(findJavaScriptSites('src/clamp.js', '  limit: number;', null).map((s) => s.kind)).toEqual(['statement']);
  });
});
