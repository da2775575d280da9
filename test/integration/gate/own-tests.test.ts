import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';
import { installTestRunners } from '../../helpers/test-runners.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { baseManifest, GOOD_A, makeWorld, type RecordingSteps } from '../../helpers/world-fixture.js';

const NODE_MODULES = realpathSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)));

// A protected test that imports the code the task writes: code that exits on import makes it vanish.
const PROTECTED_P =
  "import test from 'node:test';\nimport { a } from '../src/a.js';\ntest('p keeps passing', () => { if (a() !== 'a') throw new Error('no'); });\n";
const EXITS_ON_IMPORT = "export const a = () => 'a';\nif (!process.env.KEEP) process.exit(0);\n";

/** One task, `a`, whose paths hold its own test file as well as its code; the test step runs both. */
async function outcomeOf(opts: {
  test: string;
  setup?: string;
  deps?: Record<string, unknown>;
  env?: string;
  files: Record<string, string>;
  recording: RecordingSteps;
  ownTests: string;
}) {
  if (opts.env) process.env.GENESIS_CACHE_DIR = opts.env;
  const verify = { sandbox: 'none', setup: opts.setup ?? '', test: opts.test, timeoutSec: 240, limits: { cpus: 1, memoryMb: 1024, pids: 256 } };
  const manifest = baseManifest({
    verify: opts.deps ? { ...verify, deps: opts.deps } : verify,
    tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js', opts.ownTests] }],
    retry: { maxAttempts: 1 },
    parallelism: 1,
  });
  const f = await makeWorld({
    manifest,
    files: { 'src/a.js': GOOD_A, 'test/p.test.js': PROTECTED_P, ...opts.files },
    recording: opts.recording,
    sandbox: 'none',
  });
  await runEmbedded({ world: f.world, sandbox: f.sandbox });
  const [episode] = await new GitLedger(f.world.path).readAll();
  return { outcome: episode!.outcome, reason: episode!.reason ?? null, message: episode!.message ?? '' };
}

describe('tests-vanished, for tests of the accepted head', () => {
  describe('named by node --test (no file in the name)', () => {
    const own = (a: string, b: string) => `import test from 'node:test';\ntest(${JSON.stringify(a)}, () => {});\ntest(${JSON.stringify(b)}, () => {});\n`;
    const world = {
      test: 'node --test test/base.test.js test/p.test.js spec/',
      ownTests: 'spec/a.test.js',
      files: { 'spec/a.test.js': own('a one', 'a two') },
    };

    it('accepts a change that renames and reorders the tests of its own test file', async () => {
      const result = await outcomeOf({ ...world, recording: { a: [{ write: { 'spec/a.test.js': own('a second', 'a first') } }] } });
      expect(result, result.message).toMatchObject({ outcome: 'accepted' });
    });

    it('still rejects a change whose code makes a protected test vanish, naming only that test', async () => {
      const result = await outcomeOf({
        ...world,
        recording: { a: [{ write: { 'spec/a.test.js': own('a second', 'a first'), 'src/a.js': EXITS_ON_IMPORT } }] },
      });
      expect(result).toMatchObject({ outcome: 'rejected', reason: 'tests-vanished' });
      expect(result.message).toContain('1 test that pass on the accepted head were not reported passing: p keeps passing');
    });
  });

  describe('named by vitest with its file (JUnit in the output)', () => {
    const own = (a: string) => `import { test } from 'vitest';\ntest(${JSON.stringify(a)}, () => {});\ntest('a is there', () => {});\n`;
    const protectedV = "import { test, expect } from 'vitest';\nimport { a } from '../src/a.js';\ntest('p keeps passing', () => expect(a()).toBe('a'));\n";
    const world = {
      setup: `ln -s ${NODE_MODULES} node_modules`,
      test: 'node node_modules/vitest/vitest.mjs run --reporter=junit test/p.test.js spec/',
      ownTests: 'spec/a.test.js',
      files: { 'spec/a.test.js': own('a one'), 'test/p.test.js': protectedV },
    };

    it('accepts a change that renames a test of its own test file', async () => {
      const result = await outcomeOf({ ...world, recording: { a: [{ write: { 'spec/a.test.js': own('a renamed') } }] } });
      expect(result, result.message).toMatchObject({ outcome: 'accepted' });
    });

    it('rejects a change that stops a protected file reporting its test', async () => {
      const skipped = "export const a = () => 'a';\nif (process.argv.some((x) => x.includes('vitest'))) globalThis.__skip = true;\n";
      const protectedGuarded = protectedV.replace("test('p keeps", "(globalThis.__skip ? test.skip : test)('p keeps");
      const result = await outcomeOf({
        ...world,
        files: { ...world.files, 'test/p.test.js': protectedGuarded },
        recording: { a: [{ write: { 'spec/a.test.js': own('a renamed'), 'src/a.js': skipped } }] },
      });
      expect(result).toMatchObject({ outcome: 'rejected', reason: 'tests-vanished' });
      expect(result.message).toMatch(/1 test that pass on the accepted head were not reported passing: test\/p\.test\.js > p keeps passing$/);
    });
  });

  describe("named by mocha's tap reporter (suite and test titles joined with spaces, no file)", () => {
    const protectedM =
      "import { a } from '../src/a.js';\ndescribe('p', function () { (globalThis.__skip ? it.skip : it)('keeps passing', function () { if (a() !== 'a') throw new Error('no'); }); });\n";
    const own = (title: string) =>
      `describe('bodyParser()', function () {\n  describe('with limit', function () { it(${JSON.stringify(title)}, function () {}); });\n});\n`;
    let modules = '';
    beforeAll(async () => {
      modules = await installTestRunners();
    }, 20 * 60_000);
    const world = () => ({
      setup: `ln -s ${modules} node_modules`,
      test: 'node_modules/.bin/mocha --reporter tap test/p.test.js spec/',
      ownTests: 'spec/a.test.js',
      files: { 'spec/a.test.js': own('should presist the body'), 'test/p.test.js': protectedM },
    });

    it('accepts a change that fixes a typo in the titles of its own tests', async () => {
      const result = await outcomeOf({ ...world(), recording: { a: [{ write: { 'spec/a.test.js': own('should persist the body') } }] } });
      expect(result, result.message).toMatchObject({ outcome: 'accepted' });
    });

    it('rejects a change that renames its own tests and skips the protected one from its code', async () => {
      const skips = "export const a = () => 'a';\nglobalThis.__skip = true;\n";
      const result = await outcomeOf({ ...world(), recording: { a: [{ write: { 'spec/a.test.js': own('should persist the body'), 'src/a.js': skips } }] } });
      expect(result).toMatchObject({ outcome: 'rejected', reason: 'tests-vanished' });
      expect(result.message).toMatch(/1 test that pass on the accepted head were not reported passing: p keeps passing$/);
    });
  });

  describe("read from vitest's default reporter, which names no passing test", () => {
    const protectedV =
      "import { test, expect } from 'vitest';\nimport { a } from '../src/a.js';\n(globalThis.__skip ? test.skip : test)('p keeps passing', () => expect(a()).toBe('a'));\ntest('p is there', () => {});\n";
    const own = (a: string) => `import { test } from 'vitest';\ntest(${JSON.stringify(a)}, () => {});\n`;
    const world = {
      setup: `ln -s ${NODE_MODULES} node_modules`,
      test: 'node node_modules/vitest/vitest.mjs run test/p.test.js spec/',
      ownTests: 'spec/a.test.js',
      files: { 'spec/a.test.js': own('a one'), 'test/p.test.js': protectedV },
    };

    it("rejects a change that makes a protected file's count of passing tests fall", async () => {
      const skips = "export const a = () => 'a';\nglobalThis.__skip = true;\n";
      const result = await outcomeOf({ ...world, recording: { a: [{ write: { 'spec/a.test.js': own('a renamed'), 'src/a.js': skips } }] } });
      expect(result).toMatchObject({ outcome: 'rejected', reason: 'tests-vanished' });
      expect(result.message).toMatch(/1 test that pass on the accepted head were not reported passing: test\/p\.test\.js > \(passing test 2\)$/);
    });

    it('accepts a change that renames the test of its own file', async () => {
      const result = await outcomeOf({ ...world, recording: { a: [{ write: { 'spec/a.test.js': own('a renamed') } }] } });
      expect(result, result.message).toMatchObject({ outcome: 'accepted' });
    });
  });

  describe("read from jest's default reporter, jest installed by verify.deps from the registry", () => {
    const protectedJ = "const { a } = require('../src/a.js');\n(globalThis.__skip ? test.skip : test)('p keeps passing', () => expect(a()).toBe('a'));\n";
    const own = (a: string) => `test(${JSON.stringify(a)}, () => {});\n`;
    let cache = '';
    beforeAll(async () => {
      // One install for both cases: the set is keyed on package.json, the same in both worlds.
      cache = await tempDir('genesis-jest-cache-');
    });
    const world = () => ({
      deps: { files: ['package.json'], install: 'npm install --no-audit --no-fund', paths: ['node_modules'] },
      test: 'npx jest test/p.test.js spec/',
      ownTests: 'spec/a.test.js',
      files: {
        'package.json': `${JSON.stringify({ name: 'j', private: true, devDependencies: { jest: '29.7.0' } })}\n`,
        'src/a.js': "exports.a = () => 'a';\n",
        'spec/a.test.js': own('a one'),
        'test/p.test.js': protectedJ,
      },
      env: cache,
    });

    it('rejects a change that makes the protected file report no passing test', async () => {
      const skips = "exports.a = () => 'a';\nglobalThis.__skip = true;\n";
      const result = await outcomeOf({ ...world(), recording: { a: [{ write: { 'spec/a.test.js': own('a renamed'), 'src/a.js': skips } }] } });
      expect(result).toMatchObject({ outcome: 'rejected', reason: 'tests-vanished' });
      expect(result.message).toMatch(/1 test that pass on the accepted head were not reported passing: test\/p\.test\.js > \(passing test 1\)$/);
    }, 300_000);

    it('accepts a change that renames the test of its own file', async () => {
      const result = await outcomeOf({ ...world(), recording: { a: [{ write: { 'spec/a.test.js': own('a renamed') } }] } });
      expect(result, result.message).toMatchObject({ outcome: 'accepted' });
    }, 300_000);
  });
});
