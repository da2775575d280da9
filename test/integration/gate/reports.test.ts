import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { runGate, type GateRunInput } from '../../../src/gate/gate.js';
import { BwrapSandbox } from '../../../src/sandbox/index.js';
import { readManifest } from '../../../src/manifest/parse.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const it = itWith('bwrap');
const sandbox = new BwrapSandbox();

/** A real git repository holding `files`; returns it and the tree id the gate verifies. */
async function treeOf(files: Record<string, string>): Promise<{ repo: string; tree: string }> {
  const repo = await tempDir('genesis-gate-reports-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  git('add', '--all');
  return { repo, tree: git('write-tree') };
}

const TEST_JS =
  "import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/v.js';\ntest('one', () => assert.equal(v, 1));\ntest('two', () => assert.equal(v + 1, 2));\n";

async function gate(files: Record<string, string>, verify: Record<string, unknown>, extra: Partial<GateRunInput> = {}) {
  const manifest = readManifest(
    stringify({
      name: 'reports',
      goal: { outcome: 'x' },
      verify: { sandbox: 'bwrap', timeoutSec: 60, ...verify },
      protected: ['test/**', 'world.yaml'],
      agent: { kind: 'script', script: 'r.yaml' },
      tasks: [],
    }),
  );
  const { repo, tree } = await treeOf({ 'package.json': '{ "type": "module" }\n', 'test/v.test.js': TEST_JS, 'src/v.js': 'export const v = 1;\n', ...files });
  const setup = manifest.verify.setup ? [{ name: 'setup', command: manifest.verify.setup }] : [];
  const steps = [...setup, { name: 'test', command: manifest.verify.test }, ...(extra.steps ?? [])];
  return runGate({ repo, tree, manifest, sandbox, workDir: join(await tempDir('genesis-gate-work-'), 'gate'), ...extra, steps });
}

describe('a gate that reads a named JUnit report', () => {
  const junit = {
    test: 'mkdir -p reports && node --test --test-reporter=junit --test-reporter-destination=reports/junit.xml test/',
    report: { junit: 'reports/*.xml' },
  };

  it('counts the file the test step wrote', async () => {
    const verdict = await gate({}, { ...junit, mode: 'ratchet' }, { ratchet: { minScore: 0 } });
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.record.steps[0]?.tests).toEqual({ format: 'junit', passed: 2, failed: 0, skipped: 0 });
    expect(verdict.record.score).toBe(2);
    expect(verdict.log).toMatch(/\[report: reports\/junit.xml: 2 passed, 0 failed, 0 skipped\]/);
  });

  it('fails with report-missing when the step wrote none', async () => {
    const verdict = await gate({}, { test: 'node --test test/', report: { junit: 'reports/*.xml' } });
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'report-missing',
      message: 'test: verify.report.junit names reports/*.xml, and the step wrote no such file',
    });
  });

  it('fails with report-invalid when the file is not JUnit', async () => {
    const verdict = await gate(
      {},
      { test: 'node --test test/ && mkdir -p reports && echo "<testsuites><testcase" > reports/junit.xml', report: { junit: 'reports/*.xml' } },
    );
    expect(verdict).toMatchObject({ ok: false, reason: 'report-invalid' });
    expect(verdict.ok ? '' : verdict.message).toMatch(/^test: reports\/junit.xml is not well-formed XML/);
  });

  it('removes a report the tree already held before the step runs, so a committed one claims nothing', async () => {
    const forged =
      '<testsuites><testsuite name="f">' + Array.from({ length: 50 }, (_, i) => `<testcase name="fake ${i}"/>`).join('') + '</testsuite></testsuites>';
    const verdict = await gate({ 'reports/forged.xml': forged }, { ...junit, mode: 'ratchet' }, { ratchet: { minScore: 0 } });
    expect(verdict.record.score).toBe(2);
    expect(verdict.log).toMatch(/removed before the run, not written by it: reports\/forged.xml/);
  });
});

describe('a gate step', () => {
  it('reads JUnit XML that closes the output, without a named report', async () => {
    const verdict = await gate({}, { test: 'node --test --test-reporter=junit test/', mode: 'ratchet' }, { ratchet: { minScore: 0 } });
    expect(verdict.record.steps[0]?.tests).toMatchObject({ format: 'junit', passed: 2 });
  });

  it('starts from a fresh copy of the tree: what one step wrote, the next never sees', async () => {
    const verdict = await gate(
      {},
      { test: 'node --test test/ && echo left > left-behind.txt' },
      { steps: [{ name: 'check:x', command: 'test ! -e left-behind.txt && echo clean' }] },
    );
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.log).toContain('clean');
  });

  it('gives every run the tree as committed, whatever the run before changed, removed or locked in it', async () => {
    const spoil = 'node --test test/ && sed -i s/1/2/ src/v.js && rm package.json && chmod 000 src';
    const look = 'cat src/v.js package.json';
    const verdict = await gate(
      {},
      { test: spoil },
      {
        steps: [
          { name: 'check:a', command: look },
          { name: 'check:b', command: `${look} && ${spoil}` },
        ],
      },
    );
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.log.match(/export const v = 1;/g)).toHaveLength(2);
    expect(verdict.log).not.toContain('export const v = 2;');
  });

  it('gives the run again of a failing step the tree as committed, not as its first run left it', async () => {
    const verdict = await gate({}, { test: 'cat src/v.js; sed -i s/1/2/ src/v.js; exit 1' }, { flaky: { base: null, ownCheck: null } });
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(verdict.record.steps.map((s) => s.name)).toEqual(['test', 'test (run again)']);
    expect(verdict.log.match(/export const v = 1;/g)).toHaveLength(2);
    expect(verdict.log).not.toContain('export const v = 2;');
  });

  it('keeps what setup writes for the steps after it', async () => {
    const manifest = { test: 'test -f built.txt && node --test test/', setup: 'echo built > built.txt' };
    const verdict = await gate({}, manifest, { steps: [{ name: 'check:x', command: 'cat built.txt' }] });
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.record.steps.map((s) => s.name)).toEqual(['setup', 'test', 'check:x']);
  });

  it('is not told it runs in a gate', async () => {
    const verdict = await gate({}, { test: 'env | grep -c GENESIS || node --test test/' });
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.log).not.toMatch(/GENESIS_GATE/);
  });

  it('fails with tests-vanished when a test that passes on the head is not reported passing', async () => {
    const cut = "import test from 'node:test';\ntest('one', () => {});\n";
    const verdict = await gate({ 'test/v.test.js': cut }, { test: 'node --test test/' }, { baseline: { 'node --test test/': ['one', 'two'] } });
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'tests-vanished',
      message: 'test: 1 test that pass on the accepted head were not reported passing: two',
    });
    expect(verdict.passing).toEqual({ 'node --test test/': ['one'] });
  });

  it('signs tests-vanished with the tests that vanished, not with the end of the log', async () => {
    const baseline = { baseline: { 'node --test test/': ['one', 'two'] } };
    const keep = (name: string, log: string) =>
      `import test from 'node:test';\nconsole.log(${JSON.stringify(log)});\ntest(${JSON.stringify(name)}, () => {});\n`;
    const [lostTwo, lostTwoAgain, lostOne] = await Promise.all([
      gate({ 'test/v.test.js': keep('one', 'coverage table A') }, { test: 'node --test test/' }, baseline),
      gate({ 'test/v.test.js': keep('one', 'coverage table B, longer') }, { test: 'node --test test/' }, baseline),
      gate({ 'test/v.test.js': keep('two', 'coverage table A') }, { test: 'node --test test/' }, baseline),
    ]);
    for (const v of [lostTwo, lostTwoAgain, lostOne]) expect(v).toMatchObject({ ok: false, reason: 'tests-vanished' });
    if (lostTwo.ok || lostTwoAgain.ok || lostOne.ok) return;
    expect(lostTwoAgain.signature).toBe(lostTwo.signature);
    expect(lostOne.signature).not.toBe(lostTwo.signature);
  });
});

describe("a gate log's canary lines", () => {
  it("are marked as the gate's own checks, the must-fail one too, in a step that passed", async () => {
    const verdict = await gate({}, { test: 'node --test --test-reporter=tap test/' });
    expect(verdict.ok, verdict.log).toBe(true);
    const lines = verdict.log.split('\n');
    const canaryLines = lines.filter((l) => /genesis-canary \S+ /.test(l));
    expect(canaryLines.some((l) => l.includes('must-fail'))).toBe(true);
    for (const line of canaryLines) expect(line).toMatch(/\[the gate's own check\]$/);
    // The world's own tests are not marked; the log says what the mark means.
    expect(lines.filter((l) => /\bok \d+ - (one|two)\b/.test(l) && l.includes("gate's own check"))).toEqual([]);
    expect(verdict.log).toContain('are canaries the gate planted in the test runner, not tests of this world');
  });
});
