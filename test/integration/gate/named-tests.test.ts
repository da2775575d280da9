import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, beforeEach, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { runGate } from '../../../src/gate/gate.js';
import { loadBaseline, type TestBaseline } from '../../../src/gate/test-baseline.js';
import { readManifest } from '../../../src/manifest/parse.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';

const it = itWith('bwrap');
const TEST = 'node --test test/';

// 'settles' fails only in a process where 'warms up' ran before it: run alone, it passes (a flaky test).
const FLAKY = `const { test } = require('node:test');
let warm = false;
test('warms up', () => { warm = true; });
test('settles', () => { if (warm) throw new Error('order-dependent'); });
`;
const file = (failing: string[], passing: string[] = ['stays']) => `const { test } = require('node:test');
${passing.map((n) => `test(${JSON.stringify(n)}, () => {});`).join('\n')}
${failing.map((n) => `test(${JSON.stringify(n)}, () => { throw new Error('broken'); });`).join('\n')}
`;

let repo: string;
let sandbox: Sandbox;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const manifest = readManifest(
  stringify({
    name: 'named',
    goal: { outcome: 'x' },
    verify: { sandbox: 'bwrap', test: TEST, timeoutSec: 60 },
    agent: { kind: 'script', script: 'r.yaml' },
    tasks: [],
  }),
);

async function treeOf(files: Record<string, string>): Promise<string> {
  git('read-tree', '--empty');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
    git('add', path);
  }
  return git('write-tree');
}

async function gate(candidate: string, options: { base?: string; baseRecord?: TestBaseline; baseline?: TestBaseline } = {}) {
  return runGate({
    repo,
    tree: candidate,
    steps: [{ name: 'test', command: TEST }],
    manifest,
    sandbox,
    workDir: join(await tempDir('genesis-named-work-'), 'gate'),
    ...(options.baseline ? { baseline: options.baseline } : {}),
    flaky: { base: options.base ?? null, ownCheck: null, ...(options.baseRecord ? { baseRecord: async () => options.baseRecord! } : {}) },
  });
}

const steps = (verdict: Awaited<ReturnType<typeof gate>>) => verdict.record.steps.map((s) => [s.name, s.why, s.tests && [s.tests.passed, s.tests.failed]]);

beforeAll(async () => {
  sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
});

beforeEach(async () => {
  repo = await tempDir('genesis-named-');
  git('init', '-q');
});

describe('the run again of a failed step', () => {
  it('runs only the tests that failed, and a test that passes then is flaky with the others still passing', async () => {
    const tree = await treeOf({ 'test/a.test.js': FLAKY, 'test/b.test.js': file([], ['other file']) });
    // Every test passes on the base: none may vanish from the run the verdict is drawn from.
    const verdict = await gate(tree, { baseline: { [TEST]: ['other file', 'settles', 'warms up'] } });
    expect(verdict.ok, verdict.log).toBe(true);
    expect(verdict.record.flaky).toEqual(['test']);
    expect(steps(verdict)).toEqual([
      ['test', 'the change', [2, 1]],
      ['test (run again)', 'a re-run of 1 failed test', [1, 0]],
    ]);
    expect(verdict.record.steps[1]?.command).toContain("'--test-name-pattern=^settles$'");
    // The canaries ran in the filtered run too: a run that skipped them would not be judged by them.
    const rerunLog = verdict.log.slice(verdict.log.indexOf('[test (run again)]'));
    expect(rerunLog).toMatch(/ok \d+ - genesis-canary \S+ node-\S+ must-pass/);
    // What the next gates compare with is the whole step's, not the re-run's one test.
    expect(verdict.passing[TEST]).toEqual(['other file', 'settles', 'warms up']);
  });

  it('fails the change when the named tests fail again', async () => {
    const tree = await treeOf({ 'test/a.test.js': file(['breaks']) });
    const verdict = await gate(tree);
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(steps(verdict)).toEqual([
      ['test', 'the change', [1, 1]],
      ['test (run again)', 'a re-run of 1 failed test', [0, 1]],
    ]);
  });

  it('runs the whole step again where the command starts no runner it can filter', async () => {
    const tree = await treeOf({ 'test/a.test.js': file(['breaks']) });
    const command = 'sh -c "node --test test/"';
    const verdict = await runGate({
      repo,
      tree,
      steps: [{ name: 'test', command }],
      manifest,
      sandbox,
      workDir: join(await tempDir('genesis-named-work-'), 'gate'),
      flaky: { base: null, ownCheck: null },
    });
    expect(verdict.record.steps.map((s) => [s.why, s.command])).toEqual([
      ['the change', command],
      ['a re-run of the whole step', command],
    ]);
  });
});

describe('a step that failed twice, asked of the base', () => {
  it('is the change failure with no run on the base when the base record says the test passed there', async () => {
    const base = await treeOf({ 'test/a.test.js': file([], ['stays', 'breaks']) });
    const tree = await treeOf({ 'test/a.test.js': file(['breaks']) });
    const verdict = await gate(tree, { base, baseRecord: { [TEST]: ['breaks', 'stays'] } });
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(verdict.record.steps.some((s) => s.name.includes('on the base'))).toBe(false);
    expect(verdict.log).toContain("1 of the failing tests passed on the base by its gate's record");
  });

  it('runs on the base only the failing tests its record does not know, and a failure there too is the base', async () => {
    const base = await treeOf({ 'test/a.test.js': file(['breaks'], ['stays', 'also stays']) });
    const tree = await treeOf({ 'test/a.test.js': file(['breaks'], ['stays', 'also stays']) });
    const verdict = await gate(tree, { base, baseRecord: { [TEST]: ['also stays', 'stays'] } });
    expect(verdict).toMatchObject({ ok: false, reason: 'broken-base' });
    expect(steps(verdict).at(-1)).toEqual(['test (on the base)', '1 test on the base', [0, 1]]);
  });

  it('runs the failing tests on the base when its record cannot be read, and blames the change when they pass there', async () => {
    const base = await treeOf({ 'test/a.test.js': file([], ['stays', 'breaks']) });
    const tree = await treeOf({ 'test/a.test.js': file(['breaks']) });
    const scratch = await tempDir('genesis-named-scratch-');
    await mkdir(join(scratch, 'baselines'), { recursive: true });
    await writeFile(join(scratch, 'baselines', `${base}.json`), '{ "node --test test/": ["breaks"');
    const verdict = await runGate({
      repo,
      tree,
      steps: [{ name: 'test', command: TEST }],
      manifest,
      sandbox,
      workDir: join(await tempDir('genesis-named-work-'), 'gate'),
      flaky: { base, ownCheck: null, baseRecord: () => loadBaseline(scratch, base) },
    });
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(steps(verdict).at(-1)).toEqual(['test (on the base)', '1 test on the base', [1, 0]]);
  });

  it('is the base when a test file no longer loads there, as a step with no names would be', async () => {
    const base = await treeOf({ 'test/a.test.js': "throw new Error('the base cannot load this file');\n" });
    const tree = await treeOf({ 'test/a.test.js': file(['breaks']) });
    const verdict = await gate(tree, { base, baseRecord: {} });
    expect(verdict).toMatchObject({ ok: false, reason: 'broken-base' });
  });

  it('does not excuse a change whose failing test the base does not have, nor one that also breaks a test the base fails', async () => {
    // The base is broken for 'already broken'; the change breaks it too and adds a failing test of its own.
    const base = await treeOf({ 'test/a.test.js': file(['already broken']) });
    const tree = await treeOf({ 'test/a.test.js': file(['already broken', 'new and failing']) });
    const verdict = await gate(tree, { base, baseRecord: { [TEST]: ['stays'] } });
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(steps(verdict).at(-1)).toEqual(['test (on the base)', '2 tests on the base', [0, 1]]);
  });
});

describe('a run whose change breaks what landed before it', () => {
  it('charges the change from the landed base results, with no run on the base, and lands the next attempt', async () => {
    // b may touch a's module and breaks it at first: a's check, which passed when a landed, fails twice.
    const manifest = baseManifest({
      parallelism: 1,
      tasks: [
        { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' },
        { id: 'b', title: 'module b', paths: ['src/a.js', 'src/b.js'], dependsOn: ['a'], check: 'node --test test/b.test.js' },
      ],
    });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/a.js': BAD_A, 'src/b.js': GOOD_B } }, { write: { 'src/b.js': GOOD_B } }] },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const [first, second] = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'b');
    expect(first).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
    expect(first!.gate?.steps.map((s) => [s.name, s.why])).toEqual([
      ['test', 'the change'],
      ['check:a', 'the change'],
      ['check:a (run again)', 'a re-run of 1 failed test'],
    ]);
    expect(first!.gate?.steps.some((s) => s.name.includes('on the base'))).toBe(false);
    expect(second).toMatchObject({ outcome: 'accepted' });
  });
});
