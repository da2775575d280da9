import { describe, expect, it } from 'vitest';
import { secondMutantGateSec } from '../../../../../src/operations/calibrate/mutants/second-gate.js';

describe('secondMutantGateSec: a mutant whose head failed without it is gated again', () => {
  it('gates again a mutant whose head failed without it (broken-base), with twice the time, within the gate limit', () => {
    expect(secondMutantGateSec('broken-base', 60, 600)).toBe(120);
    expect(secondMutantGateSec('broken-base', 200, 300)).toBe(300);
  });

  it('leaves a mutant that ran out of its time to its own gate, which ran the step again with twice the time', () => {
    expect(secondMutantGateSec('gate-timeout', 67, 300)).toBeNull();
  });

  it('lets a rejection by the tests stand', () => {
    expect(secondMutantGateSec('test-failed', 60, 600)).toBeNull();
    expect(secondMutantGateSec('tests-vanished', 60, 600)).toBeNull();
  });
});
