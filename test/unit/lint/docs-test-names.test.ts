import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

function filesUnder(dir: string, ending: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), ending) : entry.name.endsWith(ending) ? [join(dir, entry.name)] : [],
  );
}

/**
 * Every `npm test -- -t '<name>'` a page of docs/ (or the README) tells a reader to run; a name
 * holding an apostrophe is written in double quotes, and is checked the same.
 */
function namedTests(markdown: string): string[] {
  return [...markdown.matchAll(/npm test -- -t (?:'([^']+)'|"([^"]+)")/g)].map((m) => (m[1] ?? m[2])!);
}

describe("the tests docs/ names with npm test -- -t '<name>'", () => {
  const pages = [join(ROOT, 'README.md'), ...filesUnder(join(ROOT, 'docs'), '.md')];
  const named = pages.flatMap((page) => namedTests(readFileSync(page, 'utf8')).map((name) => ({ page: relative(ROOT, page), name })));
  const sources = filesUnder(join(ROOT, 'test'), '.test.ts').map((file) => readFileSync(file, 'utf8'));

  it('are named in the security page', () => {
    expect(named.filter((n) => n.page === 'docs/security.md').length).toBeGreaterThanOrEqual(10);
  });

  it('are read in single and in double quotes', () => {
    expect(namedTests(`npm test -- -t 'a gate'; npm test -- -t "node-tap's assertions"`)).toEqual(['a gate', "node-tap's assertions"]);
  });

  it('each match a test or a describe that exists, so the command runs something', () => {
    const unmatched = named.filter(({ name }) => !sources.some((source) => source.includes(name.replaceAll('\\"', '"'))));
    expect(unmatched).toEqual([]);
  });
});
