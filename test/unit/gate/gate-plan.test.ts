import { describe, expect, it } from 'vitest';
import { briefGateSummary, describeGateSteps, planGate, summarizeGate } from '../../../src/gate/plan.js';
import { manifestSchema, type TaskSpec, type WorldManifest } from '../../../src/manifest/schema.js';

function world(verify: Record<string, unknown> = {}, tasks: Array<Record<string, unknown>> = []): WorldManifest {
  return manifestSchema.parse({
    name: 'calc',
    goal: { outcome: 'a calculator' },
    verify: { test: 'node --test test/world.test.js', ...verify },
    agent: { kind: 'script', script: 'rec.yaml' },
    tasks,
  });
}

const tasks = [
  { id: 'add', title: 'add', paths: ['src/add.js'], check: 'node --test test/add.test.js' },
  { id: 'mul', title: 'mul', paths: ['src/mul.js'], check: 'node --test test/mul.test.js' },
  { id: 'docs', title: 'docs', paths: ['docs'] },
  { id: 'eval', title: 'eval', paths: ['src/eval.js'], check: 'node --test test/eval.test.js' },
];

function taskOf(m: WorldManifest, id: string): TaskSpec {
  return m.tasks.find((t) => t.id === id)!;
}

const none = new Set<string>();

describe('planGate', () => {
  it('runs only the world test when setup and build are not set', () => {
    expect(planGate(world(), null, none)).toEqual([{ name: 'test', command: 'node --test test/world.test.js' }]);
  });

  it('runs setup, then build, then the test when they are set', () => {
    expect(planGate(world({ setup: 'npm ci --offline', build: 'npm run build' }), null, none)).toEqual([
      { name: 'setup', command: 'npm ci --offline' },
      { name: 'build', command: 'npm run build' },
      { name: 'test', command: 'node --test test/world.test.js' },
    ]);
  });

  it('leaves out a setup or build that is only whitespace', () => {
    expect(planGate(world({ setup: '  ', build: '\n' }), null, none).map((s) => s.name)).toEqual(['test']);
  });

  it("adds the episode's own task check", () => {
    const m = world({}, tasks);
    expect(planGate(m, taskOf(m, 'mul'), none)).toEqual([
      { name: 'test', command: 'node --test test/world.test.js' },
      { name: 'check:mul', command: 'node --test test/mul.test.js' },
    ]);
  });

  it('adds the checks of done tasks but not of pending ones, in manifest order', () => {
    const m = world({}, tasks);
    expect(planGate(m, taskOf(m, 'eval'), new Set(['mul', 'add'])).map((s) => s.name)).toEqual(['test', 'check:add+mul', 'check:eval']);
  });

  it("runs the checks of done tasks that are one runner over paths as one step, keeping each check's command", () => {
    const m = world({}, tasks);
    expect(planGate(m, taskOf(m, 'docs'), new Set(['mul', 'add', 'eval']))).toEqual([
      { name: 'test', command: 'node --test test/world.test.js' },
      {
        name: 'check:add+mul+eval',
        command: 'node --test test/add.test.js test/mul.test.js test/eval.test.js',
        checks: [
          { id: 'add', command: 'node --test test/add.test.js' },
          { id: 'mul', command: 'node --test test/mul.test.js' },
          { id: 'eval', command: 'node --test test/eval.test.js' },
        ],
      },
    ]);
  });

  it("keeps the episode's own check a step of its own, even when its runner is the done checks'", () => {
    const m = world({}, tasks);
    const steps = planGate(m, taskOf(m, 'add'), new Set(['mul', 'eval']));
    expect(steps.map((s) => [s.name, s.command])).toEqual([
      ['test', 'node --test test/world.test.js'],
      ['check:add', 'node --test test/add.test.js'],
      ['check:mul+eval', 'node --test test/mul.test.js test/eval.test.js'],
    ]);
  });

  it('runs a check together only with checks of the same runner and options, at the place of the first', () => {
    const m = world({}, [
      { id: 'a', title: 'a', paths: ['a'], check: 'node --test test/a.test.js test/shared/' },
      { id: 'b', title: 'b', paths: ['b'], check: 'npm run check' },
      { id: 'c', title: 'c', paths: ['c'], check: 'node --experimental-vm-modules --test test/c.test.js' },
      { id: 'd', title: 'd', paths: ['d'], check: 'node  --test  ./test/d.test.js test/more/' },
      { id: 'e', title: 'e', paths: ['e'], check: 'node --experimental-vm-modules --test test/e.test.js' },
    ]);
    expect(planGate(m, null, new Set(['a', 'b', 'c', 'd', 'e'])).map((s) => [s.name, s.command])).toEqual([
      ['test', 'node --test test/world.test.js'],
      ['check:a+d', 'node --test test/a.test.js test/shared test/d.test.js test/more'],
      ['check:b', 'npm run check'],
      ['check:c+e', 'node --experimental-vm-modules --test test/c.test.js test/e.test.js'],
    ]);
  });

  it('never runs together checks whose paths overlap: node would run a file they share once, not once for each', () => {
    const m = world({}, [
      { id: 'a', title: 'a', paths: ['a'], check: 'node --test test/a.test.js test/shared/' },
      { id: 'b', title: 'b', paths: ['b'], check: 'node --test test/shared/b.test.js' },
      { id: 'c', title: 'c', paths: ['c'], check: 'node --test ./test/a.test.js' },
      { id: 'd', title: 'd', paths: ['d'], check: 'node --test test/d.test.js' },
      { id: 'e', title: 'e', paths: ['e'], check: 'node --test .' },
    ]);
    expect(planGate(m, null, new Set(['a', 'b', 'c', 'd', 'e'])).map((s) => [s.name, s.command])).toEqual([
      ['test', 'node --test test/world.test.js'],
      ['check:a+d', 'node --test test/a.test.js test/shared test/d.test.js'],
      ['check:b', 'node --test test/shared/b.test.js'],
      ['check:c', 'node --test ./test/a.test.js'],
      ['check:e', 'node --test .'],
    ]);
  });

  it('leaves a check alone that asks its runner for more than paths, or does anything else', () => {
    const alone = [
      'node --test --test-name-pattern=add test/a.test.js',
      'node --test',
      'node --test test/a.test.js && node scripts/verify.js',
      'cd sub && node --test test/a.test.js',
      'node --test "test/a b.test.js"',
      'node --test test/*.test.js',
      'NODE_ENV=test node --test test/a.test.js',
    ];
    const m = world({}, [
      ...alone.map((check, i) => ({ id: `x${i}`, title: 'x', paths: [`x${i}`], check })),
      { id: 'y', title: 'y', paths: ['y'], check: 'node --test test/y.test.js' },
    ]);
    const done = new Set([...alone.map((_, i) => `x${i}`), 'y']);
    expect(planGate(m, null, done).map((s) => s.command)).toEqual(['node --test test/world.test.js', ...alone, 'node --test test/y.test.js']);
    expect(planGate(m, null, done).every((s) => s.checks === undefined)).toBe(true);
  });

  it('runs the checks of done tasks for a commit without a task (the first commit, a replay)', () => {
    const m = world({}, tasks);
    expect(planGate(m, null, new Set(['add'])).map((s) => s.name)).toEqual(['test', 'check:add']);
  });

  it('skips tasks without a check', () => {
    const m = world({}, tasks);
    expect(planGate(m, taskOf(m, 'docs'), new Set(['docs'])).map((s) => s.name)).toEqual(['test']);
  });

  it('ignores done ids that are not tasks of the manifest', () => {
    const m = world({}, tasks);
    expect(planGate(m, null, new Set(['removed-task'])).map((s) => s.name)).toEqual(['test']);
  });

  it('runs a command shared by several steps once', () => {
    const m = world({}, [
      { id: 'a', title: 'a', paths: ['a'], check: 'node --test test/world.test.js' },
      { id: 'b', title: 'b', paths: ['b'], check: 'npm run check' },
      { id: 'c', title: 'c', paths: ['c'], check: 'npm run check' },
    ]);
    expect(planGate(m, taskOf(m, 'c'), new Set(['a', 'b']))).toEqual([
      { name: 'test', command: 'node --test test/world.test.js' },
      { name: 'check:b', command: 'npm run check' },
    ]);
  });
});

describe('summarizeGate', () => {
  it('summarizes each step with its test counts and the total time on one line', () => {
    const summary = summarizeGate('docker', [
      { name: 'setup', exitCode: 0, durationMs: 1200, tests: null },
      { name: 'test', exitCode: 0, durationMs: 800, tests: { passed: 12, failed: 0 } },
      { name: 'check:add', exitCode: 0, durationMs: 100, tests: { passed: 3, failed: 0 } },
    ]);
    expect(summary).toBe('docker: setup ok; test ok 12 passed 0 failed; check:add ok 3 passed 0 failed (2.1s)');
  });

  it('shows the exit code of a failing step', () => {
    expect(summarizeGate('bwrap', [{ name: 'test', exitCode: 1, durationMs: 349, tests: { passed: 2, failed: 1 } }])).toBe(
      'bwrap: test exit 1 2 passed 1 failed (0.3s)',
    );
  });

  it('handles a gate without steps', () => {
    expect(summarizeGate('none', [])).toBe('none:  (0.0s)');
  });
});

describe('briefGateSummary', () => {
  const image = `@sha256:${'a'.repeat(64)}`;

  it('tells where the gate ran, the tests that passed of those counted, the checks as a tally and the time', () => {
    const summary = `docker genesis/python:3${image}: test exit 1 9 passed 1 failed; check:slug ok 5 passed 0 failed; check:wrap ok 3 passed 0 failed (3.8s)`;
    expect(briefGateSummary(summary)).toBe('docker genesis/python:3 · 9/10 tests · 2 checks ok · 3.8s');
    // Checks run together count one each.
    expect(briefGateSummary(summary.replace('check:wrap ok', 'check:wrap+trim+pad ok'))).toBe('docker genesis/python:3 · 9/10 tests · 4 checks ok · 3.8s');
    expect(
      briefGateSummary(
        summarizeGate('bwrap', [
          { name: 'setup', exitCode: 0, durationMs: 200, tests: null },
          { name: 'test', exitCode: 0, durationMs: 1000, tests: null },
        ]),
      ),
    ).toBe('bwrap · test ok · 1.2s');
  });

  it('names a failing step and check, and drops what is left after the time (a verification on a newer tip)', () => {
    const summary = `docker genesis/node:20${image}: setup exit 2; test ok 3 passed 0 failed; check:a exit 1 0 passed 2 failed (1.0s); verified again on 0123456789ab by e1-v1`;
    expect(briefGateSummary(summary)).toBe('docker genesis/node:20 · setup exit 2 · 3/3 tests · check:a exit 1 · 1.0s');
  });

  it('gives back a line of another shape as it is', () => {
    for (const line of ['passed', 'gated by episode e1 on 0123456789ab (its record holds the verdict)', 'bwrap: something else (1.0s)'])
      expect(briefGateSummary(line)).toBe(line);
  });
});

describe('describeGateSteps', () => {
  const step = (name: string, why: string | undefined, exitCode: number, durationMs: number, tests: [number, number] | null) => ({
    name,
    ...(why === undefined ? {} : { why }),
    exitCode,
    durationMs,
    tests: tests && { passed: tests[0], failed: tests[1] },
  });

  it('lists each step with its time and why it ran, and adds up what judging a failure cost', () => {
    expect(
      describeGateSteps([
        step('build', 'to prepare the tree', 0, 400, null),
        step('test', 'the change', 1, 3000, [3, 1]),
        step('test (run again)', 'a re-run of 1 failed test', 1, 800, [0, 1]),
        step('test (on the base)', '1 test on the base', 0, 700, [1, 0]),
      ]),
    ).toEqual([
      'build                  0.40s  ok  (to prepare the tree)',
      'test                   3.00s  exit 1, 3 passed 1 failed  (the change)',
      'test (run again)       0.80s  exit 1, 0 passed 1 failed  (a re-run of 1 failed test)',
      'test (on the base)     0.70s  ok, 1 passed 0 failed  (1 test on the base)',
      '2 runs to judge a failure: 1.50s of 4.90s',
    ]);
  });

  it('adds nothing up for a gate that only ran the change, or a record from before steps said why', () => {
    expect(describeGateSteps([step('test', 'the change', 0, 1000, [4, 0])])).toEqual(['test     1.00s  ok, 4 passed 0 failed  (the change)']);
    expect(describeGateSteps([step('test', undefined, 0, 1000, null)])).toEqual(['test     1.00s  ok']);
  });
});
