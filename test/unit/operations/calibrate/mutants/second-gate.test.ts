import { describe, expect, it } from 'vitest';
import { secondMutantGateSec } from '../../../../../src/operations/calibrate/mutants/second-gate.js';

describe('secondMutantGateSec: a mutant rejected for what the machine can cause is gated again', () => {
  it('gives a mutant that ran out of its time twice that time, within the gate limit', () => {
    expect(secondMutantGateSec('gate-timeout', 67, 300)).toBe(134);
    expect(secondMutantGateSec('gate-timeout', 200, 300)).toBe(300);
  });

  it('gates again a mutant whose head failed without it (broken-base): nothing of the mutant was judged', () => {
    expect(secondMutantGateSec('broken-base', 60, 600)).toBe(120);
  });

  it('lets a rejection by the tests stand', () => {
    expect(secondMutantGateSec('test-failed', 60, 600)).toBeNull();
    expect(secondMutantGateSec('tests-vanished', 60, 600)).toBeNull();
  });
});
