import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runGate } from '../../../src/gate/gate.js';
import { passesAll } from '../../../src/gate/named-tests.js';
import type { TestRun } from '../../../src/gate/reports/cases.js';
import { readManifest } from '../../../src/manifest/parse.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { tempDir } from '../../helpers/temp-dir.js';

const TEST = 'node --test test/';
const tap = (results: [string, boolean][]) =>
  `TAP version 13\n${results.map(([n, ok], i) => `${ok ? 'ok' : 'not ok'} ${i + 1} - ${n}`).join('\n')}\n1..${results.length}\n`;

/** A sandbox that answers the first run, the filtered run again and the whole step's run again as scripted: the gate's rule is under test, not a runner. */
function scripted(first: [string, boolean][], filtered: [string, boolean][], whole: [string, boolean][]): { sandbox: Sandbox; commands: string[] } {
  const commands: string[] = [];
  const sandbox: Sandbox = {
    kind: 'none',
    check: async () => undefined,
    run: async (spec) => {
      commands.push(spec.command);
      const results = commands.length === 1 ? first : spec.command.includes('--test-name-pattern') ? filtered : whole;
      const output = tap(results);
      const exitCode = results.every(([, ok]) => ok) ? 0 : 1;
      return { exitCode, timedOut: false, oomKilled: false, output, outputBytes: output.length, truncated: false, durationMs: 1 };
    },
  };
  return { sandbox, commands };
}

const manifest = readManifest(
  stringify({
    name: 'rerun',
    goal: { outcome: 'x' },
    verify: { sandbox: 'none', test: TEST, timeoutSec: 60 },
    agent: { kind: 'script', script: 'r.yaml' },
    tasks: [],
  }),
);

async function gate(sandbox: Sandbox) {
  const repo = await tempDir('genesis-rerun-shows-');
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const tree = execFileSync('git', ['write-tree'], { cwd: repo, encoding: 'utf8' }).trim();
  const workDir = join(await tempDir('genesis-rerun-shows-work-'), 'gate');
  return runGate({ repo, tree, steps: [{ name: 'test', command: TEST }], manifest, sandbox, workDir, flaky: { base: null, ownCheck: null } });
}

describe('the run again of a failed step', () => {
  it('takes a failed test for flaky only when the run again reports it passing', async () => {
    const { sandbox, commands } = scripted(
      [
        ['stays', true],
        ['breaks', false],
      ],
      [['breaks', true]],
      [],
    );
    const verdict = await gate(sandbox);
    expect(verdict, verdict.ok ? '' : verdict.message).toMatchObject({ ok: true });
    expect(verdict.record.flaky).toEqual(['test']);
    expect(commands).toHaveLength(2);
  });

  it('leaves the failure standing when the run again exits 0 without reporting the failed test at all', async () => {
    // The filter matches nothing (a name the runner never had), and the whole step then passes without it.
    const { sandbox, commands } = scripted(
      [
        ['stays', true],
        ['breaks', false],
      ],
      [],
      [['stays', true]],
    );
    const verdict = await gate(sandbox);
    expect(verdict).toMatchObject({ ok: false, reason: 'test-failed' });
    expect(verdict.ok ? '' : verdict.message).toContain('its run again did not report it passing (breaks)');
    expect(verdict.record.flaky).toEqual([]);
    expect(commands).toHaveLength(3);
  });
});

describe('passesAll', () => {
  const run = (cases: [string, 'passed' | 'failed' | 'skipped'][]): TestRun =>
    ({ cases: cases.map(([name, outcome]) => ({ name, outcome, message: '' })), summary: null }) as unknown as TestRun;
  it('is true only when every name is reported passing and none failing', () => {
    expect(passesAll(run([['a', 'passed']]), ['a'])).toBe(true);
    expect(passesAll(run([]), ['a'])).toBe(false);
    expect(passesAll(run([['a', 'skipped']]), ['a'])).toBe(false);
    expect(
      passesAll(
        run([
          ['a', 'passed'],
          ['a', 'failed'],
        ]),
        ['a'],
      ),
    ).toBe(false);
    expect(passesAll(null, ['a'])).toBe(false);
  });

  it('counts a name as passing against a counted pass of its own file, where the reporter names no passing test', () => {
    expect(passesAll(run([['t.test.js > (passing test 1)', 'passed']]), ['t.test.js > slow'])).toBe(true);
    expect(passesAll(run([['t.test.js > (passing test 1)', 'passed']]), ['t.test.js > slow', 't.test.js > slower'])).toBe(false);
    expect(passesAll(run([['u.test.js > (passing test 1)', 'passed']]), ['t.test.js > slow'])).toBe(false);
  });
});
