import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { readExecutedLines, withExecutedLines } from '../../../../../src/operations/calibrate/coverage/executed-lines.js';
import { tempDir } from '../../../../helpers/temp-dir.js';
import { findJavaScriptSites } from '../../../../../src/operations/calibrate/mutants/javascript.js';
import { installPinned, installTestRunners, PINNED_COVERAGE_TOOLS, PINNED_TS_JEST, PINNED_VITEST, writeProject } from '../../../../helpers/test-runners.js';

const run = promisify(execFile);
/** Genesis's own node_modules, for tsx. */
const PROJECT_MODULES = realpathSync(join(import.meta.dirname, '../../../../../node_modules'));

/** The test command run as the gate runs it for calibration, and the lines it reports. */
async function executedLines(dir: string, test: string): Promise<Record<string, number[]>> {
  const { stdout } = await run('sh', ['-c', withExecutedLines(test)], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 120_000 });
  const lines = readExecutedLines(stdout);
  expect(lines, stdout).not.toBeNull();
  return Object.fromEntries([...lines!].map(([path, set]) => [path, [...set].sort((a, b) => a - b)]));
}

// Line 3 and lines 9-10 never run under the test below; every other line that holds code does.
const LIBRARY = [
  'exports.big = function big(n) {', // 1
  '  if (n > 10) {', // 2
  "    return 'big';", // 3
  '  }', // 4
  "  return 'small';", // 5
  '};', // 6
  '', // 7
  'exports.unused = function unused(n) {', // 8
  '  const doubled = n * 2;', // 9
  '  return doubled + 1;', // 10
  '};', // 11
].join('\n');
const TEST = "const assert = require('node:assert');\nconst lib = require('./lib.js');\nassert.equal(lib.big(3), 'small');\n";

const TYPED = [
  'export interface Range {', // 1
  '  max: number;', // 2
  '}', // 3
  'export function clamp(n: number, r: Range): number {', // 4
  '  if (n > r.max) return r.max;', // 5
  '  return n;', // 6
  '}', // 7
  'export function unused(n: number): number {', // 8
  '  return n * 2;', // 9
  '}', // 10
].join('\n');

// Under the test below, line 6 (the branch) and line 11 (a function) never run.
const BRANCHED = [
  'export interface Range {', // 1
  '  max: number;', // 2
  '}', // 3
  'export function clamp(n: number, r: Range): number {', // 4
  '  if (n > r.max) {', // 5
  '    return r.max - 0;', // 6
  '  }', // 7
  '  return n + 0;', // 8
  '}', // 9
  'export function unused(n: number): number {', // 10
  '  return n * 2;', // 11
  '}', // 12
].join('\n');
const VITEST_TEST =
  "import { expect, it } from 'vitest';\nimport { clamp } from './clamp';\nit('clamps', () => {\n  expect(clamp(1, { max: 3 })).toBe(1);\n});\n";
/** The same test for jest under ts-jest, which typechecks it: jest's globals come from their package. */
const TS_JEST_TEST =
  "import { expect, test } from '@jest/globals';\nimport { clamp } from './clamp';\ntest('clamps', () => {\n  expect(clamp(1, { max: 3 })).toBe(1);\n});\n";

/** LIBRARY's lines its one test runs (big's small branch) marked, and none of those it never runs. */
function expectLibraryRun(lines: number[] | undefined, label?: string): void {
  expect(lines, label).toEqual(expect.arrayContaining([1, 2, 5, 8]));
  expect(
    lines?.filter((n) => [3, 4, 9, 10].includes(n)),
    label,
  ).toEqual([]);
}

/** The lines jest with ts-jest executed of BRANCHED, tested by TS_JEST_TEST unless `files` names another test, by this command. */
async function tsJestLines(files: Record<string, string>, command: string): Promise<Record<string, number[]>> {
  const dir = await tempDir('genesis-lines-');
  await writeProject(dir, { 'src/clamp.ts': BRANCHED, 'src/clamp.test.ts': TS_JEST_TEST, ...files }, await installPinned(PINNED_TS_JEST));
  return executedLines(dir, command);
}

/** The lines jest's run of LIBRARY's one test executed, in a project with this package.json, by this command. */
async function jestLines(packageJson: string, command: string): Promise<Record<string, number[]>> {
  const dir = await tempDir('genesis-lines-');
  const test = "const lib = require('./lib.js');\ntest('small', () => {\n  expect(lib.big(3)).toBe('small');\n});\n";
  await writeProject(dir, { 'lib.js': LIBRARY, 'lib.test.js': test, 'package.json': packageJson }, await installTestRunners());
  return executedLines(dir, command);
}

describe('the lines a suite executes, read in the gate', () => {
  let modules: string;
  beforeAll(async () => {
    modules = await installPinned(PINNED_COVERAGE_TOOLS);
  }, 20 * 60_000);

  it('under nyc, from nyc’s own report, not from V8’s offsets into nyc’s instrumented copy', async () => {
    const dir = await tempDir('genesis-lines-');
    await writeProject(dir, { 'lib.js': LIBRARY, 'test.js': TEST }, modules);
    const lines = await executedLines(dir, 'node_modules/.bin/nyc --silent node test.js');
    expect(lines['lib.js']).toEqual([1, 2, 5, 8]);
  }, 120_000);

  it('under c8, and under plain node, from V8 coverage of the file itself', async () => {
    const dir = await tempDir('genesis-lines-');
    await writeProject(dir, { 'lib.js': LIBRARY, 'test.js': TEST }, modules);
    for (const command of ['node_modules/.bin/c8 --reporter=none node test.js', 'node test.js']) {
      const lib = (await executedLines(dir, command))['lib.js'];
      expectLibraryRun(lib, command);
    }
  }, 120_000);

  it('through a source map, on the TypeScript a compiler made the tested JavaScript of, never on a line that only declares a type', async () => {
    const dir = await tempDir('genesis-lines-');
    const test = "const assert = require('node:assert');\nconst { clamp } = require('./dist/clamp.js');\nassert.equal(clamp(5, { max: 3 }), 3);\n";
    await writeProject(dir, { 'src/clamp.ts': TYPED, 'test.js': test }, modules);
    await run(join(modules, '.bin', 'tsc'), ['--sourceMap', '--outDir', 'dist', '--module', 'commonjs', '--target', 'es2020', 'src/clamp.ts'], { cwd: dir });
    for (const command of ['node test.js', 'node_modules/.bin/c8 --reporter=none node test.js']) {
      const lines = await executedLines(dir, command);
      expect(lines['src/clamp.ts'], command).toEqual([4, 5, 7, 8]);
      expect(lines['dist/clamp.js'], command).toBeUndefined();
    }
  }, 120_000);

  it('on the compiled JavaScript itself when its source map names sources the tree does not hold (a package that ships dist/ alone)', async () => {
    const dir = await tempDir('genesis-lines-');
    const test = "const assert = require('node:assert');\nconst { clamp } = require('./dist/clamp.js');\nassert.equal(clamp(5, { max: 3 }), 3);\n";
    await writeProject(dir, { 'src/clamp.ts': TYPED, 'test.js': test }, modules);
    await run(join(modules, '.bin', 'tsc'), ['--sourceMap', '--outDir', 'dist', '--module', 'commonjs', '--target', 'es2020', 'src/clamp.ts'], { cwd: dir });
    await rm(join(dir, 'src'), { recursive: true });
    const lines = await executedLines(dir, 'node test.js');
    expect(lines['src/clamp.ts']).toBeUndefined();
    // dist/clamp.js: clamp's declaration and its `if` ran; unused's body (its second line from the end) did not.
    const compiled = (await readFile(join(dir, 'dist', 'clamp.js'), 'utf8')).split('\n');
    const body = compiled.findIndex((line) => line.includes('n * 2')) + 1;
    const branch = compiled.findIndex((line) => line.includes('n > r.max')) + 1;
    expect(lines['dist/clamp.js']).toContain(branch);
    expect(lines['dist/clamp.js']).not.toContain(body);
  }, 120_000);

  it('through the source map a TypeScript loader (tsx) hands Node, on the file itself', async () => {
    const dir = await tempDir('genesis-lines-');
    const test = "import assert from 'node:assert';\nimport { clamp } from './src/clamp.ts';\nassert.equal(clamp(5, { max: 3 }), 3);\n";
    await writeProject(dir, { 'src/clamp.ts': TYPED, 'test.mts': test }, PROJECT_MODULES);
    const clamp = (await executedLines(dir, 'node --import tsx test.mts'))['src/clamp.ts'];
    // esbuild maps its module wrapper onto the file's first line and declarations as it likes, and
    // no site is made on either; the lines of the bodies are what mutants are drawn from.
    expect(clamp).toContain(5);
    expect(clamp?.filter((n) => [2, 6, 9].includes(n))).toEqual([]);
  }, 120_000);

  it('under vitest, in each of its four pools, through the source map of vite’s transform, on the TypeScript file itself', async () => {
    const dir = await tempDir('genesis-lines-');
    await writeProject(
      dir,
      { 'src/clamp.ts': BRANCHED, 'src/clamp.test.ts': VITEST_TEST, 'package.json': '{ "type": "module" }\n' },
      await installPinned(PINNED_VITEST),
    );
    // Each pool that runs a test file in a Node process or thread of its own; the vm pools evaluate
    // each transform by vm.runInContext in a context of their own.
    for (const pool of ['forks', 'threads', 'vmThreads', 'vmForks']) {
      const lines = await executedLines(dir, `node node_modules/vitest/vitest.mjs run --pool=${pool}`);
      expect(lines['src/clamp.ts'], pool).toEqual([4, 5, 8, 9]);
      expect(lines['src/clamp.test.ts'], pool).toEqual([1, 2, 3, 4, 5]);
      // So no mutant is drawn from the branch or the function the test never runs, though both hold sites.
      const drawn = findJavaScriptSites('src/clamp.ts', BRANCHED, new Set(lines['src/clamp.ts'])).map((site) => site.line);
      expect(new Set(drawn), pool).toEqual(new Set([5, 8]));
      const every = findJavaScriptSites('src/clamp.ts', BRANCHED, null).map((site) => site.line);
      expect(every).toEqual(expect.arrayContaining([6, 11]));
    }
  }, 240_000);

  it('under vitest’s vm pools, on a CommonJS file of the project required untransformed, inside the wrapper the pool compiles it in', async () => {
    const dir = await tempDir('genesis-lines-');
    const test =
      "import { expect, it } from 'vitest';\nimport { createRequire } from 'node:module';\nconst lib = createRequire(import.meta.url)('./lib.cjs');\nit('small', () => {\n  expect(lib.big(3)).toBe('small');\n});\n";
    await writeProject(dir, { 'src/lib.cjs': LIBRARY, 'src/lib.test.ts': test, 'package.json': '{ "type": "module" }\n' }, await installPinned(PINNED_VITEST));
    for (const pool of ['vmThreads', 'vmForks']) {
      const lib = (await executedLines(dir, `node node_modules/vitest/vitest.mjs run --pool=${pool}`))['src/lib.cjs'];
      expectLibraryRun(lib, pool);
    }
  }, 240_000);

  it('under jest with ts-jest, through the source map ts-jest inlines in the code jest runs by vm, on the TypeScript file itself', async () => {
    const lines = (
      await tsJestLines(
        { 'package.json': '{ "jest": { "preset": "ts-jest" } }\n', 'tsconfig.json': '{ "compilerOptions": { "strict": true } }\n' },
        'node node_modules/jest/bin/jest.js --ci',
      )
    )['src/clamp.ts'];
    // tsc maps the export of unused, which runs as the module loads, onto its declaration (10),
    // which holds no site: mutants come from lines 5 and 8 alone, as under vitest.
    expect(lines).toEqual([4, 5, 8, 9, 10]);
    const drawn = findJavaScriptSites('src/clamp.ts', BRANCHED, new Set(lines)).map((site) => site.line);
    expect(new Set(drawn)).toEqual(new Set([5, 8]));
  }, 120_000);

  it('under jest’s ESM mode, through the source map in the code jest evaluates as a vm.SourceTextModule', async () => {
    const lines = await tsJestLines(
      {
        'src/clamp.test.ts': TS_JEST_TEST.replace("'./clamp'", "'./clamp.js'"),
        'package.json': JSON.stringify({
          type: 'module',
          jest: { preset: 'ts-jest/presets/default-esm', moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' } },
        }),
        'tsconfig.json': '{ "compilerOptions": { "strict": true, "module": "ESNext", "target": "ES2022", "moduleResolution": "bundler" } }\n',
      },
      'node --experimental-vm-modules node_modules/jest/bin/jest.js --ci',
    );
    expect(lines['src/clamp.ts']).toEqual([4, 5, 8, 9, 10]);
    expect(lines['src/clamp.test.ts']).toEqual([1, 2, 3, 4, 5]);
  }, 120_000);

  it('leaves a TypeScript file that ts-jest compiled without a source map unreported, not placed on the offsets of its compiled code', async () => {
    const lines = await tsJestLines(
      { 'package.json': '{ "jest": { "preset": "ts-jest" } }\n', 'tsconfig.json': '{ "compilerOptions": { "strict": true, "sourceMap": false } }\n' },
      'node node_modules/jest/bin/jest.js --ci',
    );
    expect(lines['src/clamp.ts']).toBeUndefined();
  }, 120_000);

  it('under jest, through the source map babel-jest leaves in the code jest wraps and runs by vm, not from the file’s own offsets', async () => {
    const lib = (await jestLines('{}\n', 'node node_modules/jest/bin/jest.js --ci'))['lib.js'];
    expectLibraryRun(lib);
  }, 120_000);

  it('under jest with no transform, on the file’s own text inside the module wrapper jest runs it in, not at the offsets that wrapper shifts', async () => {
    const lib = (await jestLines('{ "jest": { "transform": {} } }\n', 'node node_modules/jest/bin/jest.js --ci'))['lib.js'];
    expectLibraryRun(lib);
  }, 120_000);

  it('leaves a file jest ran unreported when the test command replaced NODE_OPTIONS, not read at V8’s offsets into what jest ran', async () => {
    const lines = await jestLines('{}\n', 'NODE_OPTIONS=--no-warnings node node_modules/jest/bin/jest.js --ci');
    expect(lines['lib.js']).toBeUndefined();
  }, 120_000);

  it('in every Python process the step starts, from the standard library alone', async () => {
    const dir = await tempDir('genesis-lines-');
    await writeProject(
      dir,
      {
        'calc.py':
          'def grade(score):\n    if score >= 50:\n        return "pass"\n    return "fail"\n\n\ndef unused(n):\n    total = n * 2\n    return total + 1\n',
        'tests/test_calc.py': 'from calc import grade\n\n\ndef test_grade():\n    assert grade(70) == "pass"\n',
        'twice.py': 'import subprocess, sys\nsubprocess.run([sys.executable, "-c", "import calc; calc.grade(1)"], check=True)\n',
      },
      null,
    );
    const lines = await executedLines(dir, 'python3 -m pytest -q -p no:cacheprovider tests && python3 twice.py');
    // pytest runs lines 1-3 (a pass); the child process that twice.py starts adds line 4 (a fail).
    expect(lines['calc.py']).toEqual([1, 2, 3, 4, 7]);
    expect(lines['tests/test_calc.py']).toEqual([1, 4, 5]);
  }, 120_000);
});
