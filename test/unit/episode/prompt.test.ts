import { describe, expect, it } from 'vitest';
import { composePrompt, type PromptInput } from '../../../src/episode/prompt.js';
import { planGate } from '../../../src/gate/plan.js';
import type { EpisodeOutcome, EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { manifestSchema, type TaskSpec, type WorldManifest } from '../../../src/manifest/schema.js';

const manifest: WorldManifest = manifestSchema.parse({
  name: 'calc',
  goal: { outcome: 'A calculator library and command line.', constraints: ['Plain JavaScript ES modules, no dependencies.', 'Keep functions pure.'] },
  verify: { test: 'node --test test/world.test.js' },
  protected: ['test/**', 'world.yaml'],
  agent: { kind: 'script', script: '.genesis/recording.yaml' },
  retry: { maxAttempts: 4 },
  tasks: [{ id: 'add', title: 'add(a, b)', paths: ['src/arith.js'], check: 'node --test test/arith.test.js' }],
});

const task: TaskSpec = {
  witness: false,
  review: false,
  kind: 'build',
  id: 'add',
  title: 'add(a, b) and sub(a, b)',
  description: 'Export add(a, b) and sub(a, b) from src/arith.js.',
  acceptance: 'test/arith.test.js passes.',
  paths: ['src/arith.js', 'src/lib/**'],
  dependsOn: [],
  check: 'node --test test/arith.test.js',
};

function episode(attempt: number, outcome: EpisodeOutcome | null, more: Partial<EpisodeRecord> = {}): EpisodeRecord {
  return {
    version: 1,
    id: `20260101-000000-00${attempt}-abcdef`,
    world: 'calc',
    task: 'add',
    attempt,
    agent: 'script',
    base: 'a'.repeat(40),
    candidate: null,
    commit: null,
    status: outcome === null ? 'running' : 'final',
    outcome,
    reason: outcome === null ? null : attempt % 2 === 0 ? 'test-failed' : 'agent-exit',
    message: outcome === null ? null : `message of attempt ${attempt}`,
    signature: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: null,
    phases: {},
    gate: null,
    changedFiles: [],
    usage: null,
    worker: 'test',
    ...more,
  };
}

function prompt(more: Partial<PromptInput> = {}): string {
  return composePrompt({ manifest, task, attempt: 1, earlier: [], ...more });
}

function section(text: string, heading: string): string {
  const start = text.indexOf(`## ${heading}`);
  expect(start, `section ${heading}`).toBeGreaterThanOrEqual(0);
  const next = text.indexOf('\n## ', start + 1);
  return text.slice(start, next === -1 ? undefined : next);
}

describe('composePrompt', () => {
  it('names the world, the task and the attempt out of the allowed attempts', () => {
    expect(prompt({ attempt: 2 }).split('\n')[0]).toBe('# World "calc": task add (attempt 2 of 4)');
  });

  it('carries the goal, the task title, description and acceptance', () => {
    const text = prompt();
    expect(section(text, 'Goal')).toContain('A calculator library and command line.');
    expect(section(text, 'Task: add(a, b) and sub(a, b)')).toContain('Export add(a, b) and sub(a, b) from src/arith.js.');
    expect(section(text, 'Acceptance')).toContain('test/arith.test.js passes.');
  });

  it('states the rules the gate enforces: allowed and protected paths, test commands and constraints', () => {
    const rules = section(prompt(), 'Rules the gate enforces');
    expect(rules).toContain('- Change only: src/arith.js, src/lib/**');
    expect(rules).toContain('- Never change: test/**, world.yaml');
    expect(rules).toContain(
      '- Every change must pass each of these commands, run in this order in a fresh sandbox without network (nothing else is run):\n  - test: node --test test/world.test.js\n  - check:add: node --test test/arith.test.js\n',
    );
    expect(rules).toContain('- Plain JavaScript ES modules, no dependencies.');
    expect(rules).toContain('- Keep functions pure.');
    expect(rules).toMatch(/empty change counts as a failure/);
  });

  it('names only the world test when the task has no check', () => {
    const { check: _check, ...withoutCheck } = task;
    const bare = { ...manifest, tasks: [{ ...manifest.tasks[0]!, check: undefined }] };
    expect(prompt({ manifest: bare, task: withoutCheck })).toContain('(nothing else is run):\n  - test: node --test test/world.test.js\n- ');
  });

  it('lists every command the gate runs, from the same plan: setup, build, test, its own check and the checks of done tasks only', () => {
    const world = manifestSchema.parse({
      ...manifest,
      verify: { ...manifest.verify, setup: 'npm ci --offline', build: 'npm run build' },
      tasks: [
        { id: 'add', title: 'add', paths: ['src/arith.js'], check: 'node --test test/arith.test.js' },
        { id: 'parse', title: 'parse', paths: ['src/parse.js'], check: 'node --test test/parse.test.js' },
        { id: 'cli', title: 'cli', paths: ['src/cli.js'], check: 'node --test test/cli.test.js' },
      ],
    });
    const rules = section(prompt({ manifest: world, task: world.tasks[0]!, doneTasks: new Set(['parse']) }), 'Rules the gate enforces');
    const listed = rules.split('\n').filter((l) => l.startsWith('  - '));
    expect(listed).toEqual(planGate(world, world.tasks[0]!, new Set(['parse'])).map((s) => `  - ${s.name}: ${s.command}`));
    expect(listed).toEqual([
      '  - setup: npm ci --offline',
      '  - build: npm run build',
      '  - test: node --test test/world.test.js',
      '  - check:add: node --test test/arith.test.js',
      '  - check:parse: node --test test/parse.test.js',
    ]);
  });

  it('says so when a task has no description, and leaves out an empty acceptance', () => {
    const text = prompt({ task: { ...task, description: '', acceptance: '' } });
    expect(text).toContain('(no further description)');
    expect(text).not.toContain('## Acceptance');
  });

  it('has no section on earlier attempts for a first attempt', () => {
    expect(prompt()).not.toContain('Earlier attempts');
  });

  it('ends with one newline', () => {
    expect(prompt()).toMatch(/[^\n]\n$/);
  });

  describe('when earlier attempts failed', () => {
    it('reflects them newest first, with reason, message and changed files', () => {
      const earlier = [
        episode(1, 'rejected', { reason: 'test-failed', message: '2 tests failed', changedFiles: ['src/arith.js'] }),
        episode(2, 'failed', { reason: 'agent-exit', message: 'exit 1' }),
      ];
      const reflections = section(prompt({ attempt: 3, earlier }), 'Earlier attempts at this task (newest first)');
      expect(reflections.split('\n').slice(1).filter(Boolean)).toEqual([
        '- attempt 2: failed (agent-exit): exit 1',
        '- attempt 1: rejected (test-failed): 2 tests failed',
        '  changed: src/arith.js',
      ]);
    });

    it('keeps at most the three newest failed attempts', () => {
      const earlier = [1, 5, 2, 4, 3].map((n) => episode(n, 'rejected'));
      const text = prompt({ attempt: 6, earlier });
      const attempts = [...text.matchAll(/^- attempt (\d+):/gm)].map((m) => Number(m[1]));
      expect(attempts).toEqual([5, 4, 3]);
    });

    it('leaves out abandoned, accepted and still running episodes', () => {
      const earlier = [episode(1, 'rejected'), episode(2, 'abandoned'), episode(3, 'accepted'), episode(4, null), episode(5, 'failed')];
      const attempts = [...prompt({ attempt: 6, earlier }).matchAll(/^- attempt (\d+): (\w+)/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(attempts).toEqual(['5 failed', '1 rejected']);
    });

    it('lists at most ten changed files of an attempt', () => {
      const changedFiles = Array.from({ length: 15 }, (_, i) => `src/f${i}.js`);
      const text = prompt({ attempt: 2, earlier: [episode(1, 'rejected', { changedFiles })] });
      expect(text).toContain(`  changed: ${changedFiles.slice(0, 10).join(', ')}\n`);
      expect(text).not.toContain('src/f10.js');
    });

    it('shows the tail of the last gate log under the newest attempt only, indented', () => {
      const earlier = [episode(1, 'rejected'), episode(2, 'rejected')];
      const text = prompt({ attempt: 3, earlier, lastGateLog: 'not ok 1 - adds\nexpected 5, got 6' });
      const reflections = section(text, 'Earlier attempts at this task (newest first)');
      expect(reflections).toContain(
        '- attempt 2: rejected (test-failed): message of attempt 2\n  gate log (tail):\n    not ok 1 - adds\n    expected 5, got 6\n- attempt 1:',
      );
      expect(text.match(/gate log \(tail\)/g)).toHaveLength(1);
    });

    it('bounds a long gate log to its tail', () => {
      const log = `${'HEAD-OF-LOG\n'}${'x'.repeat(100_000)}\nLAST-LINE`;
      const text = prompt({ attempt: 2, earlier: [episode(1, 'rejected')], lastGateLog: log });
      expect(text).toContain('LAST-LINE');
      expect(text).not.toContain('HEAD-OF-LOG');
      expect(text.length).toBeLessThan(prompt().length + 2_500);
    });

    describe('when an attempt met hidden checks', () => {
      const step = (name: string, exitCode: number, hidden?: boolean) => ({
        name,
        command: 'c',
        exitCode,
        timedOut: false,
        oomKilled: false,
        durationMs: 1,
        tests: null,
        ...(hidden === undefined ? {} : { hidden }),
      });
      const gate = (...steps: ReturnType<typeof step>[]) => ({ ok: false, sandbox: 'bwrap', summary: '', steps, durationMs: 1 });
      const secret = 'not ok 1 - hidden: parse("x") should be 42';

      it('shows no gate log for any reason of the holdout family, whatever stage prefixed it', () => {
        // Records of other versions may hold reasons this one does not register.
        for (const reason of [
          'holdout-failed',
          'replay-holdout-failed',
          'integrate-replay-holdout-failed',
          'holdout-copy-failed',
          'HOLDOUT_TIMEOUT',
        ] as EpisodeRecord['reason'][]) {
          expect(prompt({ attempt: 2, earlier: [episode(1, 'rejected', { reason })], lastGateLog: secret })).not.toContain('parse("x")');
        }
      });

      it('shows no gate log of a gate that ran a hidden step, whatever its reason says', () => {
        for (const g of [gate(step('test', 0), step('holdout', 1)), gate(step('test', 0), step('acceptance', 1, true)), gate(step('holdout (run again)', 1))]) {
          expect(prompt({ attempt: 2, earlier: [episode(1, 'rejected', { reason: 'replay-test-failed', gate: g })], lastGateLog: secret })).not.toContain(
            'parse("x")',
          );
        }
      });

      it('still shows the log of a gate that failed before reaching them', () => {
        const text = prompt({
          attempt: 2,
          earlier: [episode(1, 'rejected', { reason: 'test-failed', gate: gate(step('test', 1)) })],
          lastGateLog: 'not ok 2 - visible',
        });
        expect(text).toContain('not ok 2 - visible');
      });
    });

    it('shows no gate log when there is no failed attempt to attach it to', () => {
      expect(prompt({ earlier: [episode(1, 'abandoned')], lastGateLog: 'noise' })).not.toContain('noise');
    });
  });
});
