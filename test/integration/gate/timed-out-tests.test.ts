import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it as it_ } from 'vitest';
import { stringify } from 'yaml';
import { runGate } from '../../../src/gate/gate.js';
import { readManifest } from '../../../src/manifest/parse.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { installTestRunners } from '../../helpers/test-runners.js';

const it = itWith('docker');
const NODE_MODULES = realpathSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)));

// A test with a per-test time of its own that needs two CPUs to finish in it, as a suite on a
// loaded one-CPU machine does: it reads its container's CPU quota.
const needsTwoCpus = (body: string) => `import test from 'node:test';
import assert from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
const read = (f) => readFileSync(f, 'utf8').trim();
// cgroup v2 (cpu.max: "<quota> <period>") or v1 (cpu.cfs_quota_us, -1 for none).
const [quota, period] = existsSync('/sys/fs/cgroup/cpu.max')
  ? read('/sys/fs/cgroup/cpu.max').split(' ')
  : [read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'), read('/sys/fs/cgroup/cpu/cpu.cfs_period_us')];
const cpus = quota === 'max' || quota === '-1' ? Infinity : Number(quota) / Number(period);
test('fits in its time', { timeout: 300 }, async () => { ${body} });
`;

async function gate(
  testFile: string,
  kind: 'docker' | 'none' = 'docker',
  files: Record<string, string> = {},
  test = 'node --test test/',
  timeoutSec = 120,
  onlyTimeouts = false,
) {
  const repo = await tempDir('genesis-timeouts-');
  for (const [path, content] of Object.entries({ 'package.json': '{ "type": "module" }\n', 'test/t.test.js': testFile, ...files })) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  git('add', '--all');
  const manifest = readManifest(
    stringify({
      name: 'timeouts',
      goal: { outcome: 'x' },
      verify: { sandbox: kind, image: 'genesis/node:20', test, timeoutSec, limits: { cpus: 1, memoryMb: 1024, pids: 128 } },
      protected: ['test/**'],
      agent: { kind: 'script', script: 'r.yaml' },
      tasks: [],
    }),
  );
  const sandbox = await createSandbox(kind, { image: 'genesis/node:20' });
  return runGate({
    repo,
    tree: git('write-tree'),
    steps: [...(kind === 'none' ? [{ name: 'setup', command: `ln -s ${NODE_MODULES} node_modules` }] : []), { name: 'test', command: manifest.verify.test }],
    manifest,
    sandbox,
    workDir: join(await tempDir('genesis-timeouts-work-'), 'gate'),
    flaky: { base: null, ownCheck: null, ...(onlyTimeouts ? { onlyTimeouts } : {}) },
  });
}

describe('a test that fails only by its own per-test timeout', () => {
  it('is run again with more CPUs, and passing then is flaky, not the change', async () => {
    const verdict = await gate(needsTwoCpus('if (cpus < 2) await new Promise((r) => setTimeout(r, 2000));'));
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.record.flaky).toEqual(['test']);
    expect(verdict.record.steps.map((s) => [s.name, s.exitCode])).toEqual([
      ['test', 1],
      ["test (run again with 2 CPUs and 4× the runner's per-test limits: only per-test timeouts failed)", 0],
    ]);
  });

  it('still fails the change when it times out with more CPUs too', async () => {
    const verdict = await gate(needsTwoCpus('await new Promise((r) => setTimeout(r, 2000));'));
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(verdict.record.steps.at(-1)?.name).toBe("test (run again with 2 CPUs and 4× the runner's per-test limits: only per-test timeouts failed)");
  });

  it('leaves a failing assertion to an ordinary run again, with the limits as they are', async () => {
    const verdict = await gate(needsTwoCpus('assert.equal(cpus, 99);'));
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(verdict.record.steps.map((s) => s.name)).toEqual(['test', 'test (run again)']);
  });
});

describe("a vitest test that fails only by the config's per-test time", () => {
  // vitest's own limit, which no CPU count raises where none is enforced (bubblewrap, no sandbox): the run again raises the limit itself.
  const vitest = (ms: number) =>
    gate(
      `import { test } from 'vitest';\ntest('slow but right', async () => { await new Promise((r) => setTimeout(r, ${ms})); });\n`,
      'none',
      { 'vitest.config.js': 'export default { test: { testTimeout: 400 } };\n' },
      'node node_modules/vitest/vitest.mjs run test/',
    );

  it_(
    "passes its run again with the runner's limit raised, and is flaky, not the change",
    async () => {
      const verdict = await vitest(700);
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.record.flaky).toEqual(['test']);
      expect(verdict.record.steps.map((s) => [s.name, s.exitCode])).toEqual([
        ['setup', 0],
        ['test', 1],
        [expect.stringContaining("4× the runner's per-test limits: only per-test timeouts failed"), 0],
      ]);
    },
    120_000,
  );

  it_(
    'still fails the change when it outlasts the raised limit too',
    async () => {
      const verdict = await vitest(3000);
      expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    },
    120_000,
  );
});

describe("a step that runs out of the gate's own time", () => {
  const passing = "import test from 'node:test';\ntest('quick', () => {});\n";
  // The first run is slowed as a loaded machine slows it (a marker outside the tree says which run this is).
  const slowOnce = (marker: string) => `echo started; if [ ! -e ${marker} ]; then touch ${marker}; sleep 30; fi; node --test test/`;

  it_(
    "is run again with the gate's time anew, and passing then is flaky, not the change",
    async () => {
      const marker = join(await tempDir('genesis-gate-timeout-'), 'ran');
      const verdict = await gate(passing, 'none', {}, slowOnce(marker), 3);
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.record.flaky).toEqual(['test']);
      expect(verdict.record.steps.map((s) => s.name)).toEqual(['setup', 'test', expect.stringContaining("anew: it ran out of the gate's time)")]);
    },
    60_000,
  );

  it_(
    'still fails the change when it hangs the second time too (the cheat: a change that never ends)',
    async () => {
      const verdict = await gate(passing, 'none', {}, 'echo started; sleep 30; node --test test/', 3);
      expect(verdict).toMatchObject({ ok: false, reason: 'gate-timeout', message: "test ran out of the gate's 3s twice, the second time with more CPUs" });
    },
    60_000,
  );

  it_(
    "in a gate whose time was cut to the suite's own (a mutant's), is run again with twice the time even when it printed nothing",
    async () => {
      const marker = join(await tempDir('genesis-gate-timeout-'), 'ran');
      // Silent, and 4 s long the second time: it passes only if its run again has more than the first 3 s.
      const verdict = await gate(
        passing,
        'none',
        {},
        `if [ ! -e ${marker} ]; then touch ${marker}; sleep 30; fi; sleep 4; node --test test/ > /dev/null`,
        3,
        true,
      );
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.record.flaky).toEqual(['test']);
      expect(verdict.record.steps.map((s) => s.name)).toEqual(['setup', 'test', expect.stringContaining("6s anew: it ran out of the gate's time)")]);
    },
    60_000,
  );

  it_(
    'is not run again when it printed nothing: it hangs from its start',
    async () => {
      const verdict = await gate(passing, 'none', {}, 'sleep 30; node --test test/', 3);
      expect(verdict).toMatchObject({ ok: false, reason: 'gate-timeout', message: "test ran out of the gate's 3s" });
      expect(verdict.record.steps.map((s) => s.name)).toEqual(['setup', 'test']);
    },
    60_000,
  );
});

describe("a mocha test that fails only by mocha's own per-test time (its tap reporter, as the guide suggests)", () => {
  // mocha's limit, which no CPU count raises where none is enforced: the run again raises the limit itself.
  const mocha = async (ms: number) => {
    const modules = await installTestRunners();
    return gate(
      `describe('bodyParser()', function () {\n  it('is slow but right', function (done) { this.timeout(400); setTimeout(done, ${ms}); });\n});\n`,
      'none',
      {},
      `${modules}/.bin/mocha --reporter tap test/t.test.js`,
    );
  };

  it_(
    "passes its run again with mocha's limit raised, and is flaky, not the change",
    async () => {
      const verdict = await mocha(700);
      expect(verdict.ok, verdict.log).toBe(true);
      expect(verdict.record.flaky).toEqual(['test']);
      expect(verdict.record.steps.map((s) => s.name)).toEqual([
        'setup',
        'test',
        expect.stringContaining("4× the runner's per-test limits: only per-test timeouts failed"),
      ]);
    },
    120_000,
  );

  it_(
    'still fails the change when it outlasts the raised limit too, naming the test and its timeout',
    async () => {
      const verdict = await mocha(3000);
      expect(verdict).toMatchObject({
        ok: false,
        reason: 'test-failed',
        message: expect.stringContaining('bodyParser() is slow but right (Timeout of 1600ms exceeded'),
      });
    },
    120_000,
  );
});
