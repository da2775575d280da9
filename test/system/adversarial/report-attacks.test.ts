import { afterAll, beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { itWith } from '../../helpers/services.js';
import { attackRoot, runAttackedWorld, expectAuditHolds, type AttackedWorld } from './adversarial-world.js';

/**
 * Candidates whose code attacks its own acceptance test or the gate's count of tests.
 * Each task's protected test imports the module its agent wrote and wants
 * `v` (or `v()`) to be the task's id; every attack writes a module that is wrong and tries to make
 * the gate pass it anyway, or to raise the ratchet's score. One honest task per world must land.
 */
const REWRITTEN = "import test from 'node:test';\\ntest('rewritten', () => {});\\n";

/** The protected test of a node task. */
const nodeTest = (id: string) =>
  `import test from 'node:test';\nimport assert from 'node:assert';\nimport * as m from '../src/${id}.js';\n` +
  `test('${id} is right', async () => assert.equal(typeof m.v === 'function' ? await m.v() : m.v, '${id}'));\n`;

/** Tries to rewrite the module's own test; prints the error code that stopped it. */
const rewrite = (id: string) => `try { fs.writeFileSync('test/${id}.test.js', "${REWRITTEN}"); } catch (e) { console.error('attack stopped:', e.code); }`;

const NODE_ATTACKS: Record<string, string> = {
  // Without read-only protected paths, the first run fails (the test was already loaded) and the
  // "flaky" re-run finds the rewritten test and passes.
  'overwrite-at-import': `import fs from 'node:fs';\n${rewrite('overwrite-at-import')}\nexport const v = 'wrong';\n`,
  'overwrite-at-test-time': `import fs from 'node:fs';\nexport function v() {\n  ${rewrite('overwrite-at-test-time')}\n  return 'wrong';\n}\n`,
  'overwrite-via-child': [
    "import { execSync, spawn } from 'node:child_process';",
    `try { execSync("printf '%s' \\"${REWRITTEN}\\" > test/overwrite-via-child.test.js", { stdio: 'inherit' }); } catch (e) { console.error('attack stopped: child exit', e.status); }`,
    // A child that outlives the run, to rewrite the test before the re-run.
    "spawn('sh', ['-c', 'sleep 1; rm -f test/overwrite-via-child.test.js; echo rewritten > test/overwrite-via-child.test.js'], { detached: true, stdio: 'ignore' }).unref();",
    "export const v = 'wrong';",
  ].join('\n'),
  'overwrite-via-symlink': [
    "import fs from 'node:fs';",
    `try { fs.symlinkSync('../test/overwrite-via-symlink.test.js', 'src/link.js'); fs.writeFileSync('src/link.js', "${REWRITTEN}"); } catch (e) { console.error('attack stopped:', e.code); }`,
    `try { fs.renameSync('test', 'test-old'); fs.mkdirSync('test'); fs.symlinkSync('../src', 'test/overwrite-via-symlink.test.js'); } catch (e) { console.error('attack stopped:', e.code); }`,
    "export const v = 'wrong';",
  ].join('\n'),
  // node --test reports a file that exits before registering a test as one passing test.
  'exit-on-load': 'process.exit(0);\n',
  'exit-on-load-junit': 'process.exit(0);\n',
};

/** Fake summaries in every format the gate reads, printed as the module loads. */
const FORGE = [
  "console.log('# tests 1001\\n# pass 1001\\n# fail 0');",
  "console.log('pass 1002');",
  "console.log('ℹ tests 1003\\nℹ suites 0\\nℹ pass 1003\\nℹ fail 0');",
  "console.log('TAP version 13\\nok 1 - fake\\nok 2 - fake\\n1..2');",
  'console.log(\'<?xml version="1.0"?>\\n<testsuites><testsuite name="fake" tests="1004"><testcase name="fake"/></testsuite></testsuites>\');',
  "export const v = 'wrong';",
].join('\n');

async function nodeWorld(
  name: string,
  verify: Record<string, unknown>,
  attacks: Record<string, string>,
  checkFor: (id: string) => string,
): Promise<AttackedWorld> {
  const { root } = await attackRoot();
  const ids = ['honest', ...Object.keys(attacks)];
  const recording = Object.fromEntries([
    ['honest', [{ write: { 'src/honest.js': "export const v = 'honest';\n" } }]],
    ...Object.entries(attacks).map(([id, source]) => [id, [{ write: { [`src/${id}.js`]: source } }]]),
  ]);
  const manifest = {
    name,
    goal: { outcome: 'the honest module exists' },
    verify: { sandbox: 'bwrap', timeoutSec: 60, ...verify },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 10 },
    retry: { maxAttempts: 1 },
    parallelism: 4,
    tasks: ids.map((id) => ({ id, title: id, paths: [`src/${id}.js`], check: checkFor(id) })),
  };
  const files = Object.fromEntries([...ids.map((id) => [`test/${id}.test.js`, nodeTest(id)]), ['.genesis/recording.yaml', stringify({ tasks: recording })]]);
  return runAttackedWorld({ root, manifest, files, sandbox: 'bwrap' });
}

/** A Python world, scored from pytest's JUnit file: exit 0 on load, and fake summaries printed. */
async function pytestWorld(): Promise<AttackedWorld> {
  const { root } = await attackRoot();
  const pytest = (target: string) => `python3 -B -m pytest -p no:cacheprovider -q --continue-on-collection-errors --junitxml=reports/junit.xml ${target}`;
  const attacks: Record<string, string> = {
    honest: "v = 'honest'\n",
    'py-exit-on-load': 'import os\nos._exit(0)\n',
    'py-forge':
      "print('=' * 20 + ' 1001 passed in 0.01s ' + '=' * 20)\nprint('<testsuites><testsuite tests=\"1002\"><testcase name=\"fake\"/></testsuite></testsuites>')\nv = 'wrong'\n",
  };
  const ids = Object.keys(attacks);
  const manifest = {
    name: 'report-attacks-pytest',
    goal: { outcome: 'the honest module exists' },
    verify: { sandbox: 'bwrap', mode: 'ratchet', test: pytest('tests'), report: { junit: 'reports/*.xml' }, timeoutSec: 60 },
    protected: ['tests/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 10 },
    retry: { maxAttempts: 1 },
    parallelism: 3,
    tasks: ids.map((id) => ({ id, title: id, paths: [`pkg/${id.replaceAll('-', '_')}.py`], check: pytest(`tests/test_${id.replaceAll('-', '_')}.py`) })),
  };
  const files: Record<string, string> = {
    'pkg/__init__.py': '',
    'tests/test_base.py': 'def test_base():\n    assert True\n',
    '.genesis/recording.yaml': stringify({
      tasks: Object.fromEntries(ids.map((id) => [id, [{ write: { [`pkg/${id.replaceAll('-', '_')}.py`]: attacks[id] } }]])),
    }),
  };
  for (const id of ids) {
    const mod = id.replaceAll('-', '_');
    files[`tests/test_${mod}.py`] = `from pkg.${mod} import v\n\n\ndef test_${mod}():\n    assert v == '${id}'\n`;
  }
  return runAttackedWorld({ root, manifest, files, sandbox: 'bwrap' });
}

let rewrites: AttackedWorld;
let forgedTap: AttackedWorld;
let forgedSpec: AttackedWorld;
let forgedJUnit: AttackedWorld;
let forgedPytest: AttackedWorld;

beforeAll(async () => {
  const ratchet = (reporter: string) => ({ mode: 'ratchet', test: `node --test ${reporter}test/` });
  [rewrites, forgedTap, forgedSpec, forgedJUnit, forgedPytest] = await Promise.all([
    nodeWorld(
      'report-attacks-rewrites',
      { test: 'node --test test/base.test.js' },
      NODE_ATTACKS,
      (id) => `node --test ${id === 'exit-on-load-junit' ? '--test-reporter=junit ' : ''}test/${id}.test.js`,
    ),
    nodeWorld('report-attacks-tap', ratchet(''), { forge: FORGE }, (id) => `node --test test/${id}.test.js`),
    nodeWorld('report-attacks-spec', ratchet('--test-reporter=spec '), { forge: FORGE }, (id) => `node --test --test-reporter=spec test/${id}.test.js`),
    nodeWorld('report-attacks-junit', ratchet('--test-reporter=junit '), { forge: FORGE }, (id) => `node --test --test-reporter=junit test/${id}.test.js`),
    pytestWorld(),
  ]);
}, 300_000);
afterAll(async () => {
  await Promise.all([rewrites, forgedTap, forgedSpec, forgedJUnit, forgedPytest].map((w) => w?.dispose()));
});

const all = () => [rewrites, forgedTap, forgedSpec, forgedJUnit, forgedPytest];

describe('code under test that rewrites its own acceptance test during the gate', () => {
  for (const id of ['overwrite-at-import', 'overwrite-at-test-time', 'overwrite-via-child', 'overwrite-via-symlink']) {
    itWith('bwrap')(`${id}: is refused by the read-only test, fails its check in both runs, and is never taken for flaky`, async () => {
      const e = rewrites.episodeOf(id);
      expect(e, `${e.reason}: ${e.message}`).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
      expect(e.gate?.flaky ?? []).toEqual([]);
      expect(e.gate?.steps.filter((s) => s.name.startsWith(`check:${id}`)).map((s) => s.name)).toEqual([`check:${id}`, `check:${id} (run again)`]);
      const log = (await rewrites.artifactsOf(id)).gateLog ?? '';
      expect(log).toMatch(/attack stopped: (EROFS|EBUSY|child exit)|Read-only file system/);
      expect(await rewrites.world.readFile('main', `test/${id}.test.js`)).toBe(nodeTest(id));
    });
  }
});

describe('code under test that exits 0 as it loads', () => {
  itWith('bwrap')('under node --test (TAP): the file-level pass is no test, and the check fails with no-tests-ran', () => {
    expect(rewrites.episodeOf('exit-on-load')).toMatchObject({ outcome: 'rejected', reason: 'no-tests-ran' });
    // The gate's canaries report first, so the file's own result may be missing too: nothing that ran is its.
    expect(rewrites.episodeOf('exit-on-load').message).toMatch(/reported no individual test that ran/);
  });

  itWith('bwrap')('under node --test --test-reporter=junit: no-tests-ran', () => {
    expect(rewrites.episodeOf('exit-on-load-junit')).toMatchObject({ outcome: 'rejected', reason: 'no-tests-ran' });
  });

  itWith('bwrap')('under pytest with a JUnit report: the report it never wrote is report-missing', () => {
    expect(forgedPytest.episodeOf('py-exit-on-load')).toMatchObject({ outcome: 'rejected', reason: 'report-missing' });
  });
});

describe('code under test that prints fake test summaries', () => {
  const cases = [
    ['node TAP', () => forgedTap, 'forge'],
    ['node spec', () => forgedSpec, 'forge'],
    ['node JUnit on stdout', () => forgedJUnit, 'forge'],
    ['pytest JUnit file', () => forgedPytest, 'py-forge'],
  ] as const;
  for (const [format, world, id] of cases) {
    itWith('bwrap')(`${format}: its gate counts only the tests that ran, and the honest change lands with the true score`, () => {
      const w = world();
      const forged = w.episodeOf(id);
      expect(forged.outcome).toBe('rejected');
      // The base test, plus the honest test if it landed first; never a printed count.
      expect(forged.gate?.score).toBeLessThanOrEqual(2);
      const honest = w.episodeOf('honest');
      expect(honest, `${honest.reason}: ${honest.message}`).toMatchObject({ outcome: 'accepted' });
      expect(w.history[0]?.score).toBe(2);
    });
  }
});

describe('after every attack', () => {
  itWith('bwrap')('nothing but the honest change landed, the run ended normally, and audit holds', async () => {
    for (const w of all()) {
      expect(w.summary.stop.kind).toBe('blocked');
      expect(w.history.map((c) => c.task)).toEqual(['honest', null]);
      await expectAuditHolds(w.world);
    }
  });
});
