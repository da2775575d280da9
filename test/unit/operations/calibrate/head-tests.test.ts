import { describe, expect, it } from 'vitest';
import type { GateRecord, GateStepRecord } from '../../../../src/ledger/episode-record.js';
import { testsReported } from '../../../../src/operations/calibrate/head-tests.js';

const step = (name: string, tests: GateStepRecord['tests']): GateStepRecord => ({
  name,
  command: 'node node_modules/tape/bin/tape test/*.js',
  exitCode: 0,
  timedOut: false,
  oomKilled: false,
  durationMs: 10,
  tests,
});
const record = (steps: GateStepRecord[]): GateRecord => ({ ok: true, sandbox: 'docker', summary: '', steps, durationMs: 10 });

describe("testsReported: the tests the head's suite reported", () => {
  it('counts passed, failed and skipped tests of the test step alone', () => {
    const steps = [step('setup', { format: 'tap', passed: 9, failed: 0, skipped: 0 }), step('test', { format: 'tap', passed: 3, failed: 1, skipped: 2 })];
    expect(testsReported(record(steps))).toBe(6);
  });

  it('is zero for a suite whose runner found no test to run (tape on a glob that matches no file prints 1..0)', () => {
    expect(testsReported(record([step('test', { format: 'tap', passed: 0, failed: 0, skipped: 0 })]))).toBe(0);
  });

  it('is null when the output could not be read as a report, or there was no test step: nothing is known', () => {
    expect(testsReported(record([step('test', null)]))).toBeNull();
    expect(testsReported(record([step('build', { format: 'tap', passed: 0, failed: 0, skipped: 0 })]))).toBeNull();
  });
});
