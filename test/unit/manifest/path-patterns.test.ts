import { describe, expect, it } from 'vitest';
import { describePatternProblem, isGitDirName, matchesAny, matchesPattern, patternSetsOverlap, patternsOverlap } from '../../../src/manifest/path-patterns.js';

describe('matchesPattern', () => {
  it('matches an exact file and nothing that merely shares its prefix', () => {
    expect(matchesPattern('src/add.js', 'src/add.js')).toBe(true);
    expect(matchesPattern('src/add.jsx', 'src/add.js')).toBe(false);
    expect(matchesPattern('lib/src/add.js', 'src/add.js')).toBe(false);
  });

  it('treats a plain directory, with or without a trailing slash, as everything under it', () => {
    for (const pattern of ['src', 'src/', './src']) {
      expect(matchesPattern('src/a/b/c.js', pattern)).toBe(true);
      expect(matchesPattern('src', pattern)).toBe(true);
      expect(matchesPattern('srcx/a.js', pattern)).toBe(false);
    }
  });

  it('matches globs the way picomatch does, dot files included', () => {
    expect(matchesPattern('test/unit/add.test.js', 'test/**')).toBe(true);
    expect(matchesPattern('test', 'test/**')).toBe(true);
    expect(matchesPattern('src/a.js', 'src/*.js')).toBe(true);
    expect(matchesPattern('src/lib/a.js', 'src/*.js')).toBe(false);
    expect(matchesPattern('README.md', '**/*.md')).toBe(true);
    expect(matchesPattern('docs/.hidden/notes.md', '**/*.md')).toBe(true);
    expect(matchesPattern('src/.env', 'src/*')).toBe(true);
  });

  it('lets a glob that names a directory cover everything under it', () => {
    expect(matchesPattern('packages/core/src/index.ts', 'packages/*/src')).toBe(true);
    expect(matchesPattern('packages/core/test/index.ts', 'packages/*/src')).toBe(false);
  });

  it('never treats a leading "!" as a negation that would match everything else', () => {
    expect(matchesPattern('src/add.js', '!world.yaml')).toBe(false);
  });

  it('matches nothing with an empty pattern or an empty list', () => {
    expect(matchesPattern('src/add.js', '')).toBe(false);
    expect(matchesPattern('src/add.js', './')).toBe(false);
    expect(matchesAny('src/add.js', [])).toBe(false);
  });

  it('matches a path against any pattern of a list', () => {
    expect(matchesAny('world.yaml', ['test/**', 'world.yaml'])).toBe(true);
    expect(matchesAny('src/add.js', ['test/**', 'world.yaml'])).toBe(false);
  });

  it('checks thousands of paths quickly because matchers are compiled once', () => {
    const patterns = ['test/**', 'world.yaml', 'src/*.js', 'docs', '**/*.md'];
    const started = performance.now();
    let hits = 0;
    for (let i = 0; i < 20_000; i += 1) if (matchesAny(`src/dir${i % 50}/file${i}.ts`, patterns)) hits += 1;
    expect(hits).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('patternsOverlap', () => {
  const cases: [string, string, boolean][] = [
    ['src/add.js', 'src/add.js', true],
    ['src', 'src/add.js', true],
    ['src/', 'src/lib/**', true],
    ['src/add.js', 'src/sub.js', false],
    ['src/add.js', 'src/add.js.map', false],
    ['src/*.js', 'src/add.js', true],
    ['src/*.js', 'src/add.ts', false],
    ['src/*', 'src/lib/a.js', true],
    ['test/**', 'src/**', false],
    ['test/**', 'test/unit/a.test.js', true],
    ['**/*.md', 'src/add.js', true],
    ['*.md', 'src/notes.md', false],
    ['src/*.js', 'src/*.ts', true],
    ['{src,lib}/a.js', 'lib/a.js', true],
    ['{src,lib}/a.js', 'lib/b.js', false],
    ['{src,lib/x}/a.js', 'lib/y/b.js', true],
    ['src/{a,b}.js', 'src/c.js', false],
    ['packages/*/src', 'packages/core/src/index.ts', true],
    ['packages/*/src', 'packages/core/test', false],
  ];

  it.each(cases)('says whether %s and %s can share a path (%s), in either order', (a, b, expected) => {
    expect(patternsOverlap(a, b)).toBe(expected);
    expect(patternsOverlap(b, a)).toBe(expected);
  });

  it('never reports an overlap for an empty pattern, which matches nothing', () => {
    expect(patternsOverlap('', 'src')).toBe(false);
  });

  it('reports an overlap between two lists when any pair overlaps', () => {
    expect(patternSetsOverlap(['src/add.js', 'docs'], ['docs/api.md'])).toBe(true);
    expect(patternSetsOverlap(['src/add.js'], ['src/sub.js', 'test/**'])).toBe(false);
    expect(patternSetsOverlap([], ['src'])).toBe(false);
  });
});

describe('describePatternProblem', () => {
  it('accepts files, directories and globs', () => {
    for (const pattern of ['src/add.js', 'src', 'src/', './src', 'test/**', '**/*.md', 'src/*.{js,ts}', '.github/workflows']) {
      expect(describePatternProblem(pattern)).toBeNull();
    }
  });

  const problems: [string, string, RegExp][] = [
    ['an empty pattern', '', /is empty; name a file/],
    ['a pattern that is only "."', '.', /is empty/],
    ['an absolute pattern', '/etc/passwd', /is absolute; write it relative/],
    ['a Windows drive path', 'C:/src', /is absolute/],
    ['a ".." segment', 'src/../secrets', /"\.\." segment; a pattern must stay inside/],
    ['a backslash', 'src\\add.js', /backslash; separate directories with "\/"/],
    ['a .git segment', '.git/hooks', /names git's own directory/],
    ['a nested .git segment', 'vendor/.GIT/config', /names git's own directory/],
    ['a negation', '!world.yaml', /negation, which is not supported/],
    ['an empty segment', 'src//add.js', /empty or "\." segment/],
    ['a control character', 'src/a\nb.js', /control character/],
  ];

  it.each(problems)('refuses %s and says how to write it', (_, pattern, message) => {
    expect(describePatternProblem(pattern)).toMatch(message);
  });
});

describe('isGitDirName', () => {
  it('recognises the spellings filesystems fold into .git', () => {
    for (const name of ['.git', '.GIT', '.Git.', '.git ', 'GIT~1']) expect(isGitDirName(name)).toBe(true);
    for (const name of ['.github', 'git', '.gitignore', 'x.git']) expect(isGitDirName(name)).toBe(false);
  });
});
