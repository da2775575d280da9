import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { genesis } from './genesis-cli.js';
import { projectHistory } from './project-history.js';
import { tempDir } from './temp-dir.js';

const test = (name: string, body: string) =>
  `const test = require('node:test');\nconst assert = require('node:assert');\nconst lib = require('../index.js');\ntest('${name}', async () => { ${body} });\n`;

/**
 * Adopts a small project whose four newest commits replay as: rejected for reaching the network,
 * rejected for a tool the sandbox lacks, rejected by a Genesis rule (a protected path), and
 * accepted; its head has sources with several mutation sites. Returns the world's path.
 * `testCommand`: the gate's test step (a slower one lets a test catch a gate under way).
 */
export async function adoptCalibrationProject(prefix: string, testCommand = 'node --test test/'): Promise<string> {
  const dir = await tempDir(prefix);
  const source = join(dir, 'lib');
  await projectHistory(source, [
    {
      message: 'start',
      files: {
        'index.js': 'exports.add = (a, b) => a + b;\nexports.double = (a) => a * 2;\nexports.isBig = (a) => a > 10;\n',
        'test/add.test.js': test('adds', 'assert.equal(lib.add(2, 3), 5); assert.equal(lib.double(2), 4);'),
        'ci/config': 'a\n',
      },
    },
    {
      message: 'a test that looks a name up',
      files: { 'test/dns.test.js': test('resolves', "await require('node:dns').promises.lookup('registry.invalid-genesis-test');") },
    },
    {
      message: 'a test that runs a tool',
      files: { 'test/dns.test.js': null, 'test/tool.test.js': test('tool', "require('node:child_process').execFileSync('genesis-no-such-tool');") },
    },
    { message: 'edit the CI file', files: { 'test/tool.test.js': null, 'ci/config': 'b\n' } },
    { message: 'a second test', files: { 'test/other.test.js': test('other', 'assert.ok(lib.add);') } },
  ]);
  const manifest = join(dir, 'world.yaml');
  await writeFile(
    manifest,
    stringify({
      name: 'lib',
      goal: { outcome: 'x' },
      verify: { sandbox: 'bwrap', test: testCommand },
      protected: ['world.yaml', 'ci/**'],
      agent: { kind: 'command', preset: 'claude-code' },
    }),
  );
  const world = join(dir, 'lib.world');
  const init = await genesis(['init', '--world', world, '--adopt', source, '--manifest', manifest]);
  expect(init.status, init.stderr).toBe(0);
  return world;
}
