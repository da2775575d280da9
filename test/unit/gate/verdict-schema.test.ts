import { describe, expect, it } from 'vitest';
import { candidateVerdictSchema } from '../../../src/gate/verdict-schema.js';
import type { CandidateVerdict } from '../../../src/gate/verify-candidate.js';

const gate = {
  ok: false,
  sandbox: 'bwrap',
  summary: 'test: 1 failed',
  steps: [
    {
      name: 'test',
      command: 'node --test',
      exitCode: 1,
      timedOut: false,
      oomKilled: false,
      durationMs: 812,
      tests: { format: 'tap', passed: 3, failed: 1, skipped: 0 },
    },
    {
      name: 'test (again, per-test timeouts raised)',
      command: 'node --test',
      exitCode: 0,
      timedOut: false,
      oomKilled: false,
      durationMs: 900,
      tests: null,
      hidden: false,
    },
  ],
  durationMs: 2100,
  flaky: ['test'],
  score: 3,
  image: { name: 'node:20', id: 'sha256:ab' },
};

const through = (v: CandidateVerdict) => candidateVerdictSchema.safeParse(JSON.parse(JSON.stringify(v)));

describe('a candidate verdict sent between processes', () => {
  it('comes back whole: reason, message, signature, gate record with its steps and flaky ones, log and files', () => {
    const rejected: CandidateVerdict = {
      ok: false,
      reason: 'test-failed',
      message: 'test: 1 failed',
      signature: 'x',
      gate,
      log: 'log tail',
      changedFiles: ['a.js'],
    };
    expect(through(rejected)).toEqual({ success: true, data: rejected });
    const accepted: CandidateVerdict = { ok: true, gate: { ...gate, ok: true }, log: '', changedFiles: [] };
    expect(through(accepted)).toEqual({ success: true, data: accepted });
    const preGate: CandidateVerdict = {
      ok: false,
      reason: 'protected-path',
      message: 'ci/config',
      signature: 's',
      gate: null,
      log: 'pre-gate',
      changedFiles: ['ci/config'],
    };
    expect(through(preGate)).toEqual({ success: true, data: preGate });
  });

  it('is refused when a field is missing, unknown, or a reason this version does not know', () => {
    expect(candidateVerdictSchema.safeParse({ ok: true, gate, log: '' }).success).toBe(false);
    expect(candidateVerdictSchema.safeParse({ ok: true, gate, log: '', changedFiles: [], extra: 1 }).success).toBe(false);
    expect(
      candidateVerdictSchema.safeParse({ ok: false, reason: 'no-such-reason', message: '', signature: '', gate: null, log: '', changedFiles: [] }).success,
    ).toBe(false);
  });
});
