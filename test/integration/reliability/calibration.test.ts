import { describe, expect } from 'vitest';
import { runSimCalibration } from '../../../src/compose/sim-calibration.js';
import type { SimWorldOptions } from '../../../src/agents/sim/world.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { bwrapSandbox } from '../agents/sim/sim-fixture.js';

/**
 * The reliability model against the real orchestrator: real git, the real gate in a real
 * sandbox, the run loop's retry policy. Chains of 3 steps with a high visible error rate, so that
 * retries and the verifier each move the success rate by far more than the 4 standard errors
 * (about 0.3 at 40 runs) the comparison allows; every run must also do exactly what the replay
 * of its seeded draws says (but for a race whose passing racers answered differently: which won is
the order their gates ended in). Together about 850 episodes and 200 worlds.
 */
const RATES = { steps: 3, e: 0.3, w: 0.1 };
const RUNS = 40;
const CONFIGS: Array<[string, Omit<SimWorldOptions, 'seed'>]> = [
  ['no retries and no verifier', { ...RATES, attempts: 1, d: 0, f: 0 }], // predicts 21.6%
  ['retries without a verifier', { ...RATES, attempts: 3, d: 0, f: 0 }], // 58.0%
  ['retries and a verifier with false rejections', { ...RATES, attempts: 3, d: 0.9, f: 0.05 }], // 75.5%
  ['a verifier without retries', { ...RATES, attempts: 1, d: 0.9, f: 0.05 }], // 18.5%
  // Three racers at once in place of retries: all three run (and count) every round, the first to pass wins.
  ['a race of three and a verifier, without retries', { ...RATES, attempts: 1, race: 3, d: 0.9, f: 0.05 }], // 75.5%
];

describe('calibration: measured world success against the closed form', () => {
  CONFIGS.forEach(([name, world], i) => {
    itWith('bwrap')(
      `falls within four standard errors of the closed form with ${name}`,
      async () => {
        const c = await runSimCalibration({
          world,
          runs: RUNS,
          firstSeed: 1000 * (i + 1),
          sandbox: await bwrapSandbox(),
          root: await tempDir('genesis-calibration-'),
          concurrency: 4,
        });
        const facts = `measured ${c.successes}/${c.runs} = ${c.success.toFixed(3)} (z ${c.successZ.toFixed(2)}), predicted ${c.predicted.success.toFixed(3)}; attempts ${c.meanAttempts.toFixed(2)} (z ${c.attemptsZ.toFixed(2)}) against ${c.predicted.expectedAttempts.toFixed(2)}`;
        expect(
          c.mismatches.map((m) => ({ seed: m.seed, episodes: m.episodes, success: m.success, replay: m.replay })),
          facts,
        ).toEqual([]);
        expect(Math.abs(c.successZ), facts).toBeLessThanOrEqual(4);
        expect(Math.abs(c.attemptsZ), facts).toBeLessThanOrEqual(4);
      },
      300_000,
    );
  });
});
