import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownUnder(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}

/** What dates a page or ties it to one checkout: figures go to bench/RESULTS.md, history to CHANGELOG.md. */
const DATED: Array<[string, RegExp]> = [
  ['a test-file name', /\b[\w-]+\.test\.ts\b/],
  ['a load average', /\bload (average )?\d/i],
  ['a time of day', /\b\d{1,2}:\d{2}(:\d{2})? ?UTC\b|^\d{2}:\d{2}:\d{2} /m],
  ['a commit hash', /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/],
];

function datedLines(text: string): string[] {
  return text.split('\n').flatMap((line, i) => DATED.filter(([, re]) => re.test(line)).map(([what]) => `line ${i + 1}: ${what}: ${line.trim()}`));
}

describe('the README and docs/', () => {
  it('carry no load average, time of day, commit hash or test-file name', () => {
    const pages = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];
    const found = pages.flatMap((page) => datedLines(readFileSync(page, 'utf8')).map((hit) => `${relative(ROOT, page)} ${hit}`));
    expect(found).toEqual([]);
  });

  it('would name each kind in a page that has one', () => {
    const page = 'see test/unit/gate/pre-gate.test.ts\nat load 7.5\nat 21:36 UTC\nmain at d0938cd\n14:02:11 ✓ task landed\n';
    expect(datedLines(page).map((hit) => hit.split(':')[1])).toEqual([
      ' a test-file name',
      ' a load average',
      ' a time of day',
      ' a commit hash',
      ' a time of day',
    ]);
  });
});
