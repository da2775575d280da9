// Pure: no Redis. It sits here because it guards the overlap rule the Redis lease script runs.
import { describe, expect, it } from 'vitest';
import { patternsOverlap } from '../../../src/manifest/path-patterns.js';
import { staticPrefix, staticPrefixes, staticPrefixesConflict } from '../../../src/queue/redis/lease-prefix.js';

describe('staticPrefix', () => {
  const cases: [string, string][] = [
    ['src/add.js', 'src/add.js'],
    ['src', 'src'],
    ['src/', 'src'],
    ['./src/lib/', 'src/lib'],
    ['src/lib/*.ts', 'src/lib'],
    ['src/**', 'src'],
    ['**/*.md', ''],
    ['*.md', ''],
    ['packages/*/src', 'packages'],
    ['{src,lib}/a.js', ''],
    ['src/{a,b/c}/d.js', 'src'],
    ['src/file?.js', 'src'],
    ['src/[ab].js', 'src'],
    ['src/@(a|b)/x', 'src'],
    ['src/a!b/x', 'src'],
    ['node_modules/@types/node', 'node_modules/@types/node'],
    ['.', ''],
    ['', ''],
  ];

  it.each(cases)('reduces %s to %j', (pattern, prefix) => {
    expect(staticPrefix(pattern)).toBe(prefix);
  });

  it('keeps each distinct prefix of a list once', () => {
    expect(staticPrefixes(['src/*.js', 'src/*.ts', 'docs'])).toEqual(['src', 'docs']);
  });
});

describe('staticPrefixesConflict', () => {
  const cases: [string, string, boolean][] = [
    ['src', 'src', true],
    ['src', 'src/lib/a.ts', true],
    ['src/lib', 'src/lib/a.ts', true],
    ['src', 'srcs', false],
    ['src/a.js', 'src/a.js.map', false],
    ['src/a', 'src/b', false],
    ['', 'anything/at/all', true],
    ['', '', true],
    ['docs', 'src', false],
  ];

  it.each(cases)('says whether %j and %j conflict (%s), in either order', (a, b, expected) => {
    expect(staticPrefixesConflict(a, b)).toBe(expected);
    expect(staticPrefixesConflict(b, a)).toBe(expected);
  });
});

describe('the prefix rule compared with patternsOverlap', () => {
  // Files, directories, globs at every depth, braces (also across '/'), extglobs, look-alike names.
  const patterns = [
    'src',
    'src/',
    'srcs',
    'src/add.js',
    'src/add.js.map',
    'src/sub.js',
    'src/lib',
    'src/lib/a.ts',
    'src/lib/**',
    'src/*.js',
    'src/*.ts',
    'src/*',
    'src/**/*.js',
    'src/{a,b}.js',
    'src/file?.js',
    'src/[ab].js',
    'src/@(lib|bin)/x.js',
    '{src,lib}/a.js',
    '{src,lib/x}/a.js',
    'lib/a.js',
    'lib/x/a.js',
    'lib/y/b.js',
    'test',
    'test/**',
    'test/unit/a.test.js',
    'test/*/a.test.js',
    '**/*.md',
    '*.md',
    'README.md',
    'docs',
    'docs/api.md',
    'docs/*.md',
    'packages/*/src',
    'packages/core/src/index.ts',
    'packages/core/test',
    'packages/core',
    '.github/workflows',
    '.github/**',
    'bin/calc.js',
    '**',
  ];
  const pairs = patterns.flatMap((a) => patterns.map((b): [string, string] => [a, b]));

  it('makes every pair that patternsOverlap says may share a file conflict', () => {
    const missed = pairs.filter(([a, b]) => patternsOverlap(a, b) && !staticPrefixesConflict(staticPrefix(a), staticPrefix(b)));
    expect(missed).toEqual([]);
  });

  it('still keeps apart many pairs that cannot share a file, so leases do not serialise everything', () => {
    const disjoint = pairs.filter(([a, b]) => !patternsOverlap(a, b));
    const keptApart = disjoint.filter(([a, b]) => !staticPrefixesConflict(staticPrefix(a), staticPrefix(b)));
    expect(disjoint.length).toBeGreaterThan(200);
    expect(keptApart.length).toBeGreaterThan(disjoint.length / 2);
  });
});
