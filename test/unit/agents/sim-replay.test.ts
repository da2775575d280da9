import { describe, expect, it } from 'vitest';
import { replaySimRun } from '../../../src/agents/sim/replay.js';
import { computeSimWorldModel, type SimWorldOptions } from '../../../src/agents/sim/world.js';
import { computeChainLength, computeStepOutcome } from '../../../src/reliability/index.js';

const CONFIGS: Array<[string, SimWorldOptions]> = [
  ['no retries, no verifier', { steps: 4, e: 0.2, w: 0.15, d: 0, f: 0, attempts: 1 }],
  ['retries, no verifier', { steps: 4, e: 0.2, w: 0.15, d: 0, f: 0, attempts: 3 }],
  ['retries and a verifier with false rejections', { steps: 4, e: 0.2, w: 0.15, d: 0.8, f: 0.1, attempts: 3 }],
  ['a verifier without retries', { steps: 4, e: 0.2, w: 0.15, d: 0.8, f: 0.1, attempts: 1 }],
  ['a brittle check alone', { steps: 4, e: 0.05, w: 0.2, d: 0, f: 0.3, attempts: 2 }],
  ['a race of three without retries', { steps: 4, e: 0.3, w: 0.1, d: 0.9, f: 0.05, attempts: 1, race: 3 }],
  ['races of two, retried', { steps: 4, e: 0.2, w: 0.15, d: 0.8, f: 0.1, attempts: 2, race: 2 }],
];

describe('replaySimRun', () => {
  it.each(CONFIGS)('realises the closed form of a world with %s over 20,000 seeds', (_, world) => {
    const runs = 20_000;
    let successes = 0;
    let attempts = 0;
    let squares = 0;
    for (let seed = 0; seed < runs; seed += 1) {
      const replay = replaySimRun({ ...world, seed });
      if (replay.success) successes += 1;
      attempts += replay.episodes;
      squares += replay.episodes ** 2;
    }
    const model = computeSimWorldModel(world);
    const expected = computeChainLength(computeStepOutcome(model), model.steps);
    const mean = attempts / runs;
    const sd = Math.sqrt((squares - runs * mean ** 2) / (runs - 1));
    expect(Math.abs(successes / runs - expected.success)).toBeLessThanOrEqual(4 * Math.sqrt((expected.success * (1 - expected.success)) / runs));
    expect(Math.abs(mean - expected.expectedAttempts)).toBeLessThanOrEqual((4 * sd) / Math.sqrt(runs));
  });

  it('succeeds in one episode per step when the agent never errs and the check never misjudges', () => {
    expect(replaySimRun({ steps: 5, e: 0, w: 0, f: 0, seed: 9 })).toEqual({ success: true, episodes: 5, done: 5, wrong: 0, ambiguous: false });
  });

  it('accepts every step yet fails when every answer is wrong in a way the check misses', () => {
    expect(replaySimRun({ steps: 5, e: 0, w: 1, d: 0, f: 0, seed: 9 })).toEqual({ success: false, episodes: 5, done: 5, wrong: 5, ambiguous: false });
  });

  it('gives up at the first step after its attempts when every answer is caught', () => {
    expect(replaySimRun({ steps: 5, e: 0, w: 1, d: 1, f: 0, attempts: 3, seed: 9 })).toEqual({
      success: false,
      episodes: 3,
      done: 0,
      wrong: 0,
      ambiguous: false,
    });
  });
});
