import { beforeEach } from 'vitest';
import { baseManifest } from './world-fixture.js';
import { tempDir } from './temp-dir.js';

/** package.json and package-lock.json of a world that depends on one npm package (semver 7.6.3). */
export const SEMVER_FILES: Record<string, string> = {
  'package.json': '{ "name": "fixture", "private": true, "type": "module", "dependencies": { "semver": "7.6.3" } }\n',
  'package-lock.json': `${JSON.stringify(
    {
      name: 'fixture',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'fixture', dependencies: { semver: '7.6.3' } },
        'node_modules/semver': {
          version: '7.6.3',
          resolved: 'https://registry.npmjs.org/semver/-/semver-7.6.3.tgz',
          integrity: 'sha512-oVekP1cKtI+CTDvHWYFUcMtsK/00wmAEfyqKfNdARm8u1wNVhSgaX7A8d4UuIlUI5e84iEwOhs7ZPYRmzU9U6A==',
          license: 'ISC',
          bin: { semver: 'bin/semver.js' },
          engines: { node: '>=10' },
        },
      },
    },
    null,
    2,
  )}\n`,
  'test/base.test.js':
    "import test from 'node:test';\nimport assert from 'node:assert';\nimport semver from 'semver';\ntest('semver is there', () => assert.ok(semver.gt('1.2.3', '1.2.0')));\n",
  '.gitignore': 'node_modules\n',
};

export const NPM_DEPS = { files: ['package.json', 'package-lock.json'], install: 'npm ci --ignore-scripts', paths: ['node_modules'] };

/** The fixture manifest with verify.deps (and whatever else is given for verify). */
export function depsManifest(
  sandbox: 'docker' | 'bwrap',
  verify: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const base = baseManifest(overrides);
  return { ...base, verify: { ...(base.verify as Record<string, unknown>), sandbox, deps: NPM_DEPS, ...verify } };
}

/** Points the machine's dependency cache at a fresh directory for each test. */
export function useTempDepsCache(): { root: () => string } {
  let root = '';
  beforeEach(async () => {
    root = await tempDir('genesis-deps-cache-');
    process.env.GENESIS_CACHE_DIR = root;
  });
  return { root: () => `${root}/deps` };
}
