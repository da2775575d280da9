import { describe, expect, it } from 'vitest';
import { onlyTimedOut, withMoreCpus } from '../../../src/gate/timed-out-tests.js';
import type { TestReport } from '../../../src/gate/reports/printed-counts.js';
import { readManifest } from '../../../src/manifest/parse.js';

const report = (...messages: string[]): TestReport => ({
  format: 'tap',
  passed: 1,
  failed: messages.length,
  skipped: 0,
  failures: messages.map((message, i) => ({ name: `t${i}`, message })),
});

describe('onlyTimedOut', () => {
  it.each([
    ['vitest', 'Error: Test timed out in 5000ms.'],
    ['jest', 'thrown: "Exceeded timeout of 5000 ms for a test.'],
    ['node --test', 'test timed out after 300ms'],
    ['mocha', 'Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()" is called'],
    ['pytest-timeout', 'Failed: Timeout >5.0s'],
  ])("tells %s's per-test timeout", (_runner, message) => {
    expect(onlyTimedOut(report(message))).toBe(true);
  });

  it('is false when any failure is something else, or when nothing failed by name', () => {
    expect(onlyTimedOut(report('Error: Test timed out in 5000ms.', 'AssertionError: expected 1 to be 2'))).toBe(false);
    expect(onlyTimedOut(report())).toBe(false);
    expect(onlyTimedOut(null)).toBe(false);
  });
});

describe('withMoreCpus', () => {
  const manifest = readManifest(
    'name: w\ngoal: { outcome: x }\nverify: { test: "true", limits: { cpus: 1, memoryMb: 256, pids: 64 } }\nagent: { kind: script, script: r.yaml }\n',
  );
  it("doubles the CPUs, up to the machine's, and never lowers them", () => {
    expect(withMoreCpus(manifest, 8).verify.limits).toMatchObject({ cpus: 2, memoryMb: 256 });
    expect(withMoreCpus(manifest, 1).verify.limits.cpus).toBe(1);
    expect(withMoreCpus(withMoreCpus(manifest, 8), 3).verify.limits.cpus).toBe(3);
  });
});
