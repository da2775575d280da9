import { describe, expect, it } from 'vitest';
import { drawSimAttempt, type SimOutcome } from '../../../src/agents/sim/draw.js';

const rates = { e: 0.2, w: 0.3, d: 0.6, seed: 7 };

describe('drawSimAttempt', () => {
  it('draws the same outcome for the same seed, task and attempt', () => {
    expect(drawSimAttempt(rates, 't03', 2)).toEqual(drawSimAttempt(rates, 't03', 2));
  });

  it('draws differently for another seed, task or attempt', () => {
    const base = drawSimAttempt(rates, 't03', 2).u;
    expect(drawSimAttempt({ ...rates, seed: 8 }, 't03', 2).u).not.toBe(base);
    expect(drawSimAttempt(rates, 't04', 2).u).not.toBe(base);
    expect(drawSimAttempt(rates, 't03', 3).u).not.toBe(base);
  });

  it('realises e, w and d within four standard errors over 40,000 attempts', () => {
    const counts: Record<SimOutcome, number> = { 'visible-error': 0, right: 0, 'wrong-caught': 0, 'wrong-missed': 0 };
    const n = 40_000;
    for (let i = 0; i < n; i += 1) counts[drawSimAttempt({ ...rates, seed: i % 97 }, `t${i % 13}`, Math.floor(i / 1261) + 1).outcome] += 1;
    const within = (count: number, of: number, p: number) => expect(Math.abs(count / of - p)).toBeLessThanOrEqual(4 * Math.sqrt((p * (1 - p)) / of));
    within(counts['visible-error'], n, rates.e);
    within(counts['wrong-caught'] + counts['wrong-missed'], n, rates.w);
    within(counts['wrong-caught'], counts['wrong-caught'] + counts['wrong-missed'], rates.d);
  });

  it('offsets a caught wrong answer by 1 to 9 and a missed one by a multiple of 10, so only the caught one changes the last digit', () => {
    for (let attempt = 1; attempt <= 2000; attempt += 1) {
      const draw = drawSimAttempt({ e: 0, w: 1, d: 0.5, seed: 1 }, 't01', attempt);
      if (draw.outcome === 'wrong-caught') expect(draw.offset % 10).not.toBe(0);
      else expect(draw.offset % 10).toBe(0);
      expect(draw.offset).toBeGreaterThan(0);
    }
  });

  it('never fails visibly when e is 0 and is always right when e and w are 0', () => {
    for (let attempt = 1; attempt <= 500; attempt += 1) {
      expect(drawSimAttempt({ e: 0, w: 0, d: 1, seed: 3 }, 't02', attempt)).toMatchObject({ outcome: 'right', offset: 0 });
    }
  });
});
