import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runGate } from '../../../../src/gate/gate.js';
import { checksRunTogether, type GateStep } from '../../../../src/gate/plan.js';
import type { TestBaseline } from '../../../../src/gate/test-baseline.js';
import { readManifest } from '../../../../src/manifest/parse.js';
import type { Sandbox } from '../../../../src/sandbox/sandbox.js';
import { tempDir } from '../../../helpers/temp-dir.js';

// A sandbox that answers each command with the TAP its tests would print: the gate's baselines, not a runner, are under test.
const tap = (passing: string[]) => `TAP version 13\n${passing.map((n, i) => `ok ${i + 1} - ${n}`).join('\n')}\n1..${passing.length}\n`;
const printed: Record<string, string[]> = {
  'node --test test/a.test.js test/b.test.js': ['a says a', 'b says b'],
  'node --test test/a.test.js': ['a says a'],
  'node --test test/b.test.js': ['b says b'],
};
const sandbox: Sandbox = {
  kind: 'none',
  check: async () => undefined,
  run: async (spec) => {
    const output = tap(printed[spec.command] ?? []);
    return { exitCode: 0, timedOut: false, oomKilled: false, output, outputBytes: output.length, truncated: false, durationMs: 1 };
  },
};
const manifest = readManifest(
  stringify({
    name: 'two-checks',
    goal: { outcome: 'x' },
    verify: { sandbox: 'none', test: 'true', timeoutSec: 60 },
    agent: { kind: 'script', script: 'r.yaml' },
    tasks: [],
  }),
);
const script = (title: string) => `const { test } = require('node:test');\ntest(${JSON.stringify(title)}, () => {});\n`;
const checks = [
  { id: 'a', command: 'node --test test/a.test.js' },
  { id: 'b', command: 'node --test test/b.test.js' },
];

async function worldTree(): Promise<{ repo: string; tree: string }> {
  const repo = await tempDir('genesis-checks-baseline-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  for (const [path, title] of [
    ['test/a.test.js', 'a says a'],
    ['test/b.test.js', 'b says b'],
  ] as const) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), script(title));
    git('add', path);
  }
  return { repo, tree: git('write-tree') };
}

async function gate(world: { repo: string; tree: string }, steps: GateStep[], baseline?: TestBaseline) {
  const workDir = join(await tempDir('genesis-checks-baseline-work-'), 'gate');
  return runGate({ ...world, steps, manifest, sandbox, workDir, ...(baseline ? { baseline } : {}) });
}

describe('a gate that runs two checks together', () => {
  it("keeps as each check's baseline only the tests its files define, so the check of a reopened task runs alone and passes", async () => {
    const world = await worldTree();
    const together = checksRunTogether(checks, null);
    expect(together.map((s) => s.name)).toEqual(['check:a+b']);
    const landed = await gate(world, together);
    expect(landed, landed.ok ? '' : landed.message).toMatchObject({ ok: true });
    expect(landed.passing).toEqual({ 'node --test test/a.test.js': ['a says a'], 'node --test test/b.test.js': ['b says b'] });
    // Task a reopened: its check is the episode's own and runs alone, held to a's tests only.
    const reopened = await gate(world, [{ name: 'check:a', command: checks[0]!.command }], landed.passing);
    expect(reopened, reopened.ok ? '' : reopened.message).toMatchObject({ ok: true });
  });
});
