import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findJavaScriptSites } from '../../../../src/operations/calibrate/mutants/javascript.js';
import { genesis } from '../../../helpers/genesis-cli.js';
import { adoptCalibrationProject } from '../../../helpers/calibration-project.js';
import { itWith } from '../../../helpers/services.js';
import { installTestRunners } from '../../../helpers/test-runners.js';
import { tempDir } from '../../../helpers/temp-dir.js';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/adopt');
const NODE_MODULES = realpathSync(join(import.meta.dirname, '../../../../node_modules'));

describe('genesis calibrate', () => {
  itWith('bwrap')(
    "measures f on a real project's history and d on mutants of its head, and keeps both for model and stats",
    async () => {
      const dir = await tempDir('genesis-calibrate-');
      const world = join(dir, 'minimist.world');
      const init = await genesis(['init', '--world', world, '--adopt', join(FIXTURES, 'minimist.bundle'), '--manifest', join(FIXTURES, 'minimist.world.yaml')]);
      expect(init.status, init.stderr).toBe(0);
      const run = await genesis(['calibrate', '--world', world, '--commits', '3', '--mutants', '4', '--jobs', '2', '--json']);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toContain('[3/3]');
      const report = JSON.parse(run.stdout);
      expect(report.falseRejection).toMatchObject({ of: 3 });
      expect(report.falseRejection.replays.map((r: { subject: string }) => r.subject)).toEqual(['minimist 1.2.6', 'minimist 1.2.7', 'minimist 1.2.8']);
      expect(report.falseRejection.high).toBeGreaterThan(report.falseRejection.rate);
      expect(report.recall).toMatchObject({ of: 4, executedLinesOnly: true, files: ['index.js'] });
      // minimist's suite is thorough: a mutant of a line it runs does not get through unseen.
      expect(report.recall.count).toBeGreaterThanOrEqual(3);

      const stats = JSON.parse((await genesis(['stats', '--world', world, '--json'])).stdout);
      expect(stats.verifier.recall.of).toBe(4);
      expect(stats.verifier.falseRejection.of).toBe(3);
      const model = await genesis(['model', 'chain', '--world', world, '--json']);
      expect(JSON.parse(model.stdout).model.recall).toBeCloseTo(report.recall.rate, 6);
    },
    300_000,
  );

  itWith('bwrap')(
    'tells why each of the project’s own commits was rejected, and what to change',
    async () => {
      const world = await adoptCalibrationProject('genesis-calibrate-');
      const run = await genesis(['calibrate', '--world', world, '--commits', '4', '--quiet', '--json']);
      expect(run.status, run.stderr).toBe(0);
      const f = JSON.parse(run.stdout).falseRejection;
      const byCause = Object.fromEntries(
        f.causes.map((g: { cause: string; commits: Array<{ subject: string }> }) => [g.cause, g.commits.map((c) => c.subject)]),
      );
      expect(byCause).toEqual({
        network: ['a test that looks a name up'],
        'tool-missing': ['a test that runs a tool'],
        'genesis-rule': ['edit the CI file'],
      });
      expect(f).toMatchObject({ count: 3, of: 4 });
      expect(f.causes.find((g: { cause: string }) => g.cause === 'genesis-rule').commits[0].reason).toBe('protected-path');
      const text = await genesis(['calibrate', '--world', world, '--commits', '4', '--quiet']);
      expect(text.stdout).toContain('false rejections f = 75.0%');
      expect(text.stdout).toContain('network (1): gates run without a network: install what the tests fetch through verify.deps');
    },
    300_000,
  );

  itWith('bwrap')(
    'says why d was not measured when the head has no JavaScript or TypeScript source to mutate, instead of reporting d = 0%',
    async () => {
      const dir = await tempDir('genesis-calibrate-');
      const source = join(dir, 'src');
      const { mkdir, writeFile } = await import('node:fs/promises');
      await mkdir(join(source, 'test'), { recursive: true });
      await writeFile(join(source, 'lib.py'), 'one = 1 + 0\n');
      await writeFile(join(source, 'test', 'a.test.js'), "require('node:test')('runs', () => {});\n");
      await writeFile(
        join(source, 'world.yaml'),
        stringify({
          name: 'ts',
          goal: { outcome: 'x' },
          verify: { sandbox: 'bwrap', test: 'node --test test/' },
          agent: { kind: 'command', command: ['true'] },
        }),
      );
      const world = join(dir, 'ts.world');
      const init = await genesis(['init', '--world', world, '--from', source]);
      expect(init.status, init.stderr).toBe(0);
      const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '3', '--quiet', '--json']);
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.recall).toBeNull();
      expect(report.recallUnmeasured).toContain('mutants are made of those only');
      const stats = JSON.parse((await genesis(['stats', '--world', world, '--json'])).stdout);
      expect(stats.verifier?.recall ?? null).toBeNull();
    },
    120_000,
  );

  it("says the head's suite ran no test when its runner found none (a package published without its tests), and gates no mutant", async () => {
    const runners = await installTestRunners();
    const dir = await tempDir('genesis-calibrate-');
    const source = join(dir, 'src');
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(source, { recursive: true });
    await writeFile(
      join(source, 'index.js'),
      "'use strict';\nmodule.exports = function define(o, k, v) {\n  if (k in o) return o;\n  o[k] = v + 0;\n  return o;\n};\n",
    );
    await writeFile(
      join(source, 'world.yaml'),
      stringify({
        name: 'untested',
        goal: { outcome: 'x' },
        // What define-properties 1.1.4 on are: test/ left out of the package, the runner's glob matches nothing.
        verify: { sandbox: 'none', setup: `ln -s ${runners} node_modules`, test: "node node_modules/tape/bin/tape 'test/*.js'" },
        agent: { kind: 'command', command: ['true'] },
      }),
    );
    const world = join(dir, 'untested.world');
    const init = await genesis(['init', '--world', world, '--from', source]);
    expect(init.status, init.stderr).toBe(0);
    const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '3', '--quiet', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.recall).toBeNull();
    expect(report.recallUnmeasured).toContain("the head's test step reported no test");
  }, 180_000);

  it('gates mutants of TypeScript run by vitest on the lines its tests execute, placed through the source map of vite’s transform', async () => {
    const dir = await tempDir('genesis-calibrate-');
    const source = join(dir, 'src');
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(join(source, 'test'), { recursive: true });
    await mkdir(join(source, 'src'), { recursive: true });
    // Lines 6 (the branch) and 11 (a function's body) hold sites, and the test runs neither.
    const clamp =
      'export interface Range {\n  max: number;\n}\nexport function clamp(n: number, r: Range): number {\n  if (n > r.max) {\n    return r.max - 1;\n  }\n  return n;\n}\nexport function twice(n: number): number {\n  return n * 2;\n}\n';
    await writeFile(join(source, 'src', 'clamp.ts'), clamp);
    await writeFile(
      join(source, 'test', 'clamp.test.ts'),
      "import { expect, test } from 'vitest';\nimport { clamp } from '../src/clamp.js';\ntest('clamps', () => { expect(clamp(2, { max: 3 })).toBe(2); expect(clamp(3, { max: 3 })).toBe(3); });\n",
    );
    await writeFile(join(source, 'package.json'), '{ "type": "module" }\n');
    await writeFile(
      join(source, 'world.yaml'),
      stringify({
        name: 'ts',
        goal: { outcome: 'x' },
        verify: { sandbox: 'none', setup: `ln -s ${NODE_MODULES} node_modules`, test: 'node node_modules/vitest/vitest.mjs run test/' },
        agent: { kind: 'command', command: ['true'] },
      }),
    );
    const world = join(dir, 'ts.world');
    const init = await genesis(['init', '--world', world, '--from', source]);
    expect(init.status, init.stderr).toBe(0);
    const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '4', '--quiet', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const recall = JSON.parse(run.stdout).recall;
    const executed = findJavaScriptSites('src/clamp.ts', clamp, new Set([4, 5, 8, 9]));
    expect(findJavaScriptSites('src/clamp.ts', clamp, null).length).toBeGreaterThan(executed.length);
    expect(recall).toMatchObject({ of: executed.length, executedLinesOnly: true, files: ['src/clamp.ts'], sites: executed.length });
    expect(recall.survivors.every((s: { line: number }) => s.line === 5 || s.line === 8)).toBe(true);
  }, 180_000);
  it('reports a commit that fails its gate and passes when gated again apart from f (no sandbox: a marker outside the tree counts the runs)', async () => {
    const dir = await tempDir('genesis-calibrate-');
    const source = join(dir, 'src');
    const counter = join(dir, 'runs');
    const test = (body: string) => `const test = require('node:test');\nconst fs = require('node:fs');\ntest('t', () => { ${body} });\n`;
    // Fails the first two times it runs (one gate and its own re-run), as a suite on a loaded machine does.
    const loaded = test(
      `const n = fs.existsSync(${JSON.stringify(counter)}) ? Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) : 0; fs.writeFileSync(${JSON.stringify(counter)}, String(n + 1)); if (n < 2) throw new Error('Timeout of 2000ms exceeded');`,
    );
    const { projectHistory } = await import('../../../helpers/project-history.js');
    const yaml = stringify({
      name: 'load',
      goal: { outcome: 'x' },
      verify: { sandbox: 'none', test: 'node --test test/' },
      agent: { kind: 'command', preset: 'claude-code' },
    });
    await projectHistory(source, [
      { message: 'start', files: { 'test/a.test.js': test(''), 'world.yaml': yaml } },
      { message: 'a test slowed by load', files: { 'test/load.test.js': loaded } },
      { message: 'later', files: { 'test/load.test.js': null } },
    ]);
    const world = join(dir, 'load.world');
    const init = await genesis(['init', '--world', world, '--adopt', source]);
    expect(init.status, init.stderr).toBe(0);
    const run = await genesis(['calibrate', '--world', world, '--commits', '2', '--jobs', '1', '--quiet', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const f = JSON.parse(run.stdout).falseRejection;
    expect(f).toMatchObject({ count: 0, of: 2, causes: [] });
    expect(f.flaky).toEqual([{ commit: expect.any(String), subject: 'a test slowed by load', steps: ['the whole gate (test-failed first)'] }]);
  }, 120_000);
});
