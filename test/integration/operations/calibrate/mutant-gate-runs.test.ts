import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { genesis } from '../../../helpers/genesis-cli.js';
import { projectHistory } from '../../../helpers/project-history.js';
import { tempDir } from '../../../helpers/temp-dir.js';

/**
 * A project whose one test file counts its own runs in a file outside the tree (no sandbox, so it
 * reaches it); `runs` counts those after init's own gate of the first commit.
 */
async function countingProject(lib: string, testBody: (counter: string) => string): Promise<{ world: string; runs: () => Promise<number> }> {
  const dir = await tempDir('genesis-calibrate-runs-');
  const source = join(dir, 'src');
  const counter = join(dir, 'runs');
  const count = `const fs = require('node:fs');\nconst runs = (fs.existsSync(${JSON.stringify(counter)}) ? Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) : 0) + 1;\nfs.writeFileSync(${JSON.stringify(counter)}, String(runs));\n`;
  await projectHistory(source, [
    {
      message: 'start',
      files: {
        'lib.js': lib,
        'test/lib.test.js': `const test = require('node:test');\nconst assert = require('node:assert');\nconst lib = require('../lib.js');\n${count}${testBody(counter)}`,
        'world.yaml': stringify({
          name: 'runs',
          goal: { outcome: 'x' },
          verify: { sandbox: 'none', test: 'node --test test/' },
          protected: ['test/**', 'world.yaml'],
          agent: { kind: 'command', command: ['true'] },
        }),
      },
    },
  ]);
  const world = join(dir, 'runs.world');
  const init = await genesis(['init', '--world', world, '--from', source]);
  expect(init.status, init.stderr).toBe(0);
  const counted = async () => Number(await readFile(counter, 'utf8'));
  const atInit = await counted();
  return { world, runs: async () => (await counted()) - atInit };
}

describe('a mutant gate', () => {
  it('runs the suite once per mutant, judged against the head gate that found the executed lines (no second head run, no re-run of a caught mutant)', async () => {
    const { world, runs } = await countingProject(
      'exports.add = (a, b) => a + b;\nexports.twice = (n) => n * 2;\n',
      () => "test('adds', () => assert.strictEqual(lib.add(2, 3), 5));\ntest('doubles', () => assert.strictEqual(lib.twice(4), 8));\n",
    );
    const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '3', '--jobs', '1', '--quiet', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const recall = JSON.parse(run.stdout).recall;
    expect(recall).toMatchObject({ count: 3, of: 3, executedLinesOnly: true });
    // The head's gate with coverage on, then one run for each mutant.
    expect(await runs()).toBe(1 + 3);
  }, 120_000);

  it('runs a failure again when only a runner’s per-test timeout failed, so a loaded machine does not catch the mutant', async () => {
    const { world, runs } = await countingProject(
      'exports.bump = (n) => n + 1;\n',
      // init's gate (run 1) and the head's (2) pass; the mutant's first run (3) times out as on a loaded machine; its re-run passes.
      () => "test('calls', () => { lib.bump(1); if (runs === 3) throw new Error('test timed out after 100ms'); });\n",
    );
    const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '1', '--jobs', '1', '--quiet', '--json']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).recall).toMatchObject({ count: 0, of: 1 });
    expect(await runs()).toBe(1 + 2);
  }, 120_000);
});
