import type { Runner } from './runner-world.js';

/** A runner of `<dir>/<id>.test.js`, each of which imports `src/<id>.js`, beside `<dir>/base.test.js`. */
function js(dir: string, runner: Omit<Runner, 'dir' | 'base' | 'module' | 'testFile'>): Runner {
  return { dir, base: `${dir}/base.test.js`, module: (id) => `src/${id}.js`, testFile: (id) => `${dir}/${id}.test.js`, ...runner };
}

/** node's own runner; its base test is the one every attacked world has. */
export const NODE = js('test', {
  command: (target) => `node --test ${target}`,
  // Through both the default and the strict module's bindings: an attack has to reach each.
  test: (id) =>
    `import test from 'node:test';\nimport assert from 'node:assert';\nimport { strictEqual } from 'node:assert/strict';\nimport { v } from '../src/${id}.js';\n` +
    `test('${id} is right', () => { assert.equal(v, '${id}'); strictEqual(v, '${id}'); });\n`,
  timeoutSec: 60,
});

/** A Python module can't have a dash in its name. */
const pyName = (id: string) => id.replaceAll('-', '_');

export const PYTEST: Runner = {
  command: (target) => `python3 -B -m pytest -p no:cacheprovider -q --junitxml=reports/junit.xml ${target}`,
  dir: 'tests',
  base: 'tests/test_base.py',
  module: (id) => `pkg/${pyName(id)}.py`,
  testFile: (id) => `tests/test_${pyName(id)}.py`,
  test: (id) => `from pkg.${pyName(id)} import v\n\n\ndef test_${pyName(id)}():\n    assert v == '${id}'\n`,
  report: 'reports/*.xml',
  timeoutSec: 60,
  files: { 'pkg/__init__.py': '', 'tests/test_base.py': 'def test_base():\n    assert True\n' },
};

export const VITEST = js('vt', {
  command: (target) => `node node_modules/vitest/vitest.mjs run --reporter=default --reporter=junit --outputFile.junit=reports/junit.xml ${target}`,
  test: (id) => `import { test, expect } from 'vitest';\nimport { v } from '../src/${id}.js';\ntest('${id} is right', () => expect(v).toBe('${id}'));\n`,
  report: 'reports/junit.xml',
  timeoutSec: 120,
  npm: { name: 'vitest', version: '4.1.12', esm: true },
  files: { 'vt/base.test.js': "import { test, expect } from 'vitest';\ntest('the world is sane', () => expect(1).toBe(1));\n" },
});

export const TAP = js('tt', {
  command: (target) => `node node_modules/tap/bin/run.js --reporter=tap --no-coverage ${target}`,
  test: (id) => `const t = require('tap');\nconst { v } = require('../src/${id}.js');\nt.equal(v, '${id}', '${id} is right');\n`,
  timeoutSec: 120,
  npm: { name: 'tap', version: '16.3.10' },
  files: { 'tt/base.test.js': "const t = require('tap');\nt.equal(1, 1, 'the world is sane');\n" },
});

export const JEST = js('jt', {
  command: (target) => `node node_modules/jest/bin/jest.js --ci ${target}`,
  test: (id) => `const { v } = require('../src/${id}.js');\ntest('${id} is right', () => {\n  expect(v).toBe('${id}');\n});\n`,
  timeoutSec: 120,
  npm: { name: 'jest', version: '29.7.0' },
  files: { 'jt/base.test.js': "test('the world is sane', () => {\n  expect(1).toBe(1);\n});\n" },
});
