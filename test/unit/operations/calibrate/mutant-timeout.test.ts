import { describe, expect, it } from 'vitest';
import { mutantTimeoutSec } from '../../../../src/operations/calibrate/gate-mutants.js';

describe("a mutant gate's time", () => {
  it('is three times the coverage run, so a mutant that loops forever holds a slot for about the suite’s own time', () => {
    expect(mutantTimeoutSec(40_000, 600)).toBe(120);
    expect(mutantTimeoutSec(40_001, 600)).toBe(121);
  });

  it('is never under a minute, so a loaded machine does not turn a slow pass into a catch', () => {
    expect(mutantTimeoutSec(500, 600)).toBe(60);
  });

  it('is never over the gate’s own verify.timeoutSec', () => {
    expect(mutantTimeoutSec(500, 30)).toBe(30);
    expect(mutantTimeoutSec(400_000, 600)).toBe(600);
  });
});
