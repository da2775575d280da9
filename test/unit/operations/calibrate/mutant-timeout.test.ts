import { describe, expect, it } from 'vitest';
import { mutantTimeoutSec } from '../../../../src/operations/calibrate/gate-mutants.js';

describe("a mutant gate's time", () => {
  it('is three times the coverage run, so a mutant that loops forever holds a slot for about the suite’s own time', () => {
    expect(mutantTimeoutSec(40_000, 600)).toBe(120);
    expect(mutantTimeoutSec(40_001, 600)).toBe(121);
  });

  it('is never under 20 s, however fast the suite (its run again, with twice that, covers a loaded machine)', () => {
    expect(mutantTimeoutSec(500, 600)).toBe(20);
  });

  it('is never over the gate’s own verify.timeoutSec', () => {
    expect(mutantTimeoutSec(500, 15)).toBe(15);
    expect(mutantTimeoutSec(400_000, 600)).toBe(600);
  });
});
