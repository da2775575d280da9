import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, beforeEach, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { runGate } from '../../../src/gate/gate.js';
import { CHECK_ALONE_WHY, checksRunTogether, type GateStep } from '../../../src/gate/plan.js';
import type { TestBaseline } from '../../../src/gate/test-baseline.js';
import { readManifest } from '../../../src/manifest/parse.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const it = itWith('bwrap');

const file = (passing: string[], failing: string[] = []) => `const { test } = require('node:test');
${passing.map((n) => `test(${JSON.stringify(n)}, () => {});`).join('\n')}
${failing.map((n) => `test(${JSON.stringify(n)}, () => { throw new Error('broken'); });`).join('\n')}
`;

const checks = [
  { id: 'a', command: 'node --test test/a.test.js' },
  { id: 'b', command: 'node --test test/b.test.js' },
  { id: 'c', command: 'node --test test/c.test.js' },
];
const alone: GateStep[] = checks.map((c) => ({ name: `check:${c.id}`, command: c.command }));
const together = checksRunTogether(checks, null);

let repo: string;
let sandbox: Sandbox;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const manifest = readManifest(
  stringify({
    name: 'together',
    goal: { outcome: 'x' },
    verify: { sandbox: 'bwrap', test: 'true', timeoutSec: 60 },
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

async function gate(tree: string, steps: GateStep[], baseline?: TestBaseline) {
  return runGate({
    repo,
    tree,
    steps,
    manifest,
    sandbox,
    workDir: join(await tempDir('genesis-together-work-'), 'gate'),
    allSteps: true,
    ...(baseline ? { baseline } : {}),
  });
}

const failedNames = (v: Awaited<ReturnType<typeof gate>>) =>
  [...v.log.matchAll(/^not ok \d+ - (.+)$/gm)].map((m) => m[1]).filter((n) => !n!.includes('genesis-canary'));

beforeAll(async () => {
  sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
});

beforeEach(async () => {
  repo = await tempDir('genesis-together-');
  git('init', '-q');
});

describe('checks of done tasks run together', () => {
  it('are one step of one runner over every path, and give each test the verdict its own check gave it', async () => {
    expect(together).toEqual([
      {
        name: 'check:a+b+c',
        command: 'node --test test/a.test.js test/b.test.js test/c.test.js',
        checks,
      },
    ]);
    const tree = await treeOf({
      'test/a.test.js': file(['a one', 'a two']),
      'test/b.test.js': file(['b one'], ['b broken']),
      'test/c.test.js': file(['c one']),
    });
    const byOne = await gate(tree, alone);
    const inOne = await gate(tree, together);
    for (const verdict of [byOne, inOne]) expect(verdict).toMatchObject({ ok: false, reason: 'check-failed' });
    expect(inOne.record.steps.map((s) => [s.name, s.exitCode, s.tests && [s.tests.passed, s.tests.failed]])).toEqual([['check:a+b+c', 1, [4, 1]]]);
    expect(byOne.record.steps.map((s) => s.tests && [s.tests.passed, s.tests.failed])).toEqual([
      [2, 0],
      [1, 1],
      [1, 0],
    ]);
    expect(failedNames(inOne)).toEqual(failedNames(byOne));
    expect(failedNames(inOne)).toEqual(['b broken']);
    expect(inOne.ok || inOne.message).toBe(byOne.ok || byOne.message.replace('check:b', 'check:a+b+c'));
    // Each check's command keeps the passing tests its own files define, so a later gate finds them whichever checks it runs together.
    expect(inOne.passing).toEqual({
      'node --test test/a.test.js': ['a one', 'a two'],
      'node --test test/b.test.js': ['b one'],
      'node --test test/c.test.js': ['c one'],
    });
  });

  it("keep each file's canaries: every test process runs its own, judged, and none of them counts", async () => {
    const honest = await treeOf({ 'test/a.test.js': file(['a one']), 'test/b.test.js': file(['b one']), 'test/c.test.js': file(['c one']) });
    const passed = await gate(honest, together);
    expect(passed, passed.ok ? '' : passed.message).toMatchObject({ ok: true });
    for (const role of ['must-pass', 'must-fail']) {
      const processes = new Set([...passed.log.matchAll(new RegExp(`genesis-canary \\S+ (node-[0-9a-f]+) ${role}`, 'g'))].map((m) => m[1]));
      expect(processes.size, role).toBe(3);
    }
    expect(passed.record.steps[0]!.tests).toMatchObject({ passed: 3, failed: 0, skipped: 0 });
  });

  it('hold a test that passed in any of the checks on the base to passing in their run together', async () => {
    const base = await treeOf({ 'test/a.test.js': file(['a one']), 'test/b.test.js': file(['b one', 'b two']) });
    const first = await gate(base, checksRunTogether(checks.slice(0, 2), null));
    expect(first.ok).toBe(true);
    // A third check done since: the run together is another command, and the baseline is still found by each check's.
    const candidate = await treeOf({
      'test/a.test.js': file(['a one']),
      'test/b.test.js': `${file(['b one'])}`,
      'test/c.test.js': file(['c one']),
    });
    const verdict = await gate(candidate, together, first.passing);
    expect(verdict).toMatchObject({ ok: false, reason: 'tests-vanished' });
    expect(verdict.ok || verdict.message).toContain('check:a+b+c: 1 test that pass on the accepted head were not reported passing: b two');
  });

  it("keep each check's own tests as its baseline: a reopened task's check run alone is held to its tests, not the others'", async () => {
    const base = await treeOf({ 'test/a.test.js': file(['a says a']), 'test/b.test.js': file(['b says b']), 'test/c.test.js': file(['c one']) });
    const first = await gate(base, together);
    expect(first, first.ok ? '' : first.message).toMatchObject({ ok: true });
    expect(first.record.steps.map((s) => s.name)).toEqual(['check:a+b+c']);
    // Task a reopened: its check is the episode's own, a step of its own; b and c still run together.
    const reopened = [alone[0]!, ...checksRunTogether(checks.slice(1), 'a')];
    const verdict = await gate(base, reopened, first.passing);
    expect(verdict, verdict.ok ? '' : verdict.message).toMatchObject({ ok: true });
    expect(verdict.record.steps.map((s) => s.name)).toEqual(['check:a', 'check:b+c']);
    // And a's own test still may not vanish from it.
    const broken = await treeOf({ 'test/a.test.js': file(['a other']), 'test/b.test.js': file(['b says b']), 'test/c.test.js': file(['c one']) });
    const rejected = await gate(broken, reopened, first.passing);
    expect(rejected).toMatchObject({ ok: false, reason: 'tests-vanished' });
    expect(rejected.ok || rejected.message).toBe('check:a: 1 test that pass on the accepted head were not reported passing: a says a');
  });

  it('run alone, after the run together, the checks whose files both define a title, and hold a test named alike in two of their files to passing in each', async () => {
    const base = await treeOf({ 'test/a.test.js': file(['works']), 'test/b.test.js': file(['works', 'b one']), 'test/c.test.js': file(['c one']) });
    const first = await gate(base, together);
    expect(first.ok).toBe(true);
    expect(first.record.steps.map((s) => [s.name, s.why])).toEqual([
      ['check:a+b+c', 'the change'],
      ['check:a', CHECK_ALONE_WHY],
      ['check:b', CHECK_ALONE_WHY],
    ]);
    expect(first.passing).toEqual({
      'node --test test/a.test.js': ['works'],
      'node --test test/b.test.js': ['b one', 'works'],
      'node --test test/c.test.js': ['c one'],
    });
    const candidate = await treeOf({ 'test/a.test.js': file(['works']), 'test/b.test.js': file(['b one']), 'test/c.test.js': file(['c one']) });
    const verdict = await gate(candidate, together, first.passing);
    expect(verdict).toMatchObject({ ok: false, reason: 'tests-vanished' });
    expect(verdict.ok || verdict.message).toContain('1 test that pass on the accepted head were not reported passing: works');
  });

  it('run every check alone when a test title is made at run time, keep their own runs as their baselines, and hold the run together to them', async () => {
    const dynamic = (cases: number[]) => `const { test } = require('node:test');\nfor (const n of ${JSON.stringify(cases)}) test(\`case \${n}\`, () => {});\n`;
    const tree = await treeOf({ 'test/a.test.js': file(['a one']), 'test/b.test.js': dynamic([1, 2]), 'test/c.test.js': file(['c one']) });
    const first = await gate(tree, together);
    expect(first, first.ok ? '' : first.message).toMatchObject({ ok: true });
    expect(first.record.steps.map((s) => s.name)).toEqual(['check:a+b+c', 'check:a', 'check:b', 'check:c']);
    expect(first.passing).toEqual({
      'node --test test/a.test.js': ['a one'],
      'node --test test/b.test.js': ['case 1', 'case 2'],
      'node --test test/c.test.js': ['c one'],
    });
    const candidate = await treeOf({ 'test/a.test.js': file(['a one']), 'test/b.test.js': dynamic([1]), 'test/c.test.js': file(['c one']) });
    const verdict = await gate(candidate, together, first.passing);
    expect(verdict).toMatchObject({ ok: false, reason: 'tests-vanished' });
    expect(verdict.ok || verdict.message).toBe('check:a+b+c: 1 test that pass on the accepted head were not reported passing: case 2');
  });
});
