/**
 * Calibration: sim-chain worlds run by the real orchestrator (real git, the real gate in a
 * bubblewrap sandbox, the run loop's retry policy), their measured success rate and attempts
 * side by side with the reliability model's closed form, for several configurations.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimCalibration, type SimCalibration } from '../src/compose/sim-calibration.js';
import { replaySimRun } from '../src/agents/sim/replay.js';
import type { SimWorldOptions } from '../src/agents/sim/world.js';
import { formatTable } from '../src/cli/output.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';

const RATES = { steps: 3, e: 0.3, w: 0.1 };
const CONFIGS: Array<[string, Omit<SimWorldOptions, 'seed'>]> = [
  ['A=1, no verifier', { ...RATES, attempts: 1, d: 0, f: 0 }],
  ['A=3, no verifier', { ...RATES, attempts: 3, d: 0, f: 0 }],
  ['A=3, d=0.9 f=0.05', { ...RATES, attempts: 3, d: 0.9, f: 0.05 }],
  ['A=1, d=0.9 f=0.05', { ...RATES, attempts: 1, d: 0.9, f: 0.05 }],
  ['n=5, A=2, d=0.5 f=0.1', { steps: 5, e: 0.15, w: 0.1, attempts: 2, d: 0.5, f: 0.1 }],
];
const REPLAYS = 20_000;

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const runs = ctx.quick ? 4 : 40;
  const root = await mkdtemp(join(tmpdir(), 'genesis-bench-calibration-'));
  try {
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const rows: Array<Array<string | number>> = [];
    let episodes = 0;
    let wallMs = 0;
    for (const [index, [name, world]] of CONFIGS.entries()) {
      const c = await runSimCalibration({ world, runs, firstSeed: 100_000 * (index + 1), sandbox, root: join(root, String(index)), concurrency: 4 });
      episodes += c.outcomes.reduce((sum, o) => sum + o.episodes, 0);
      wallMs += c.durationMs;
      rows.push(row(name, c, replayMany(world)));
    }
    return {
      title: `Calibration: sim-chain worlds on the real orchestrator against the closed form (${runs} runs per configuration)`,
      table: formatTable(
        [
          'configuration',
          'model recall',
          'measured success (95% CI)',
          'predicted',
          'z',
          'measured attempts (±95%)',
          'predicted',
          'z',
          `replay of ${REPLAYS} seeds`,
          'runs ≠ replay',
        ],
        rows,
      ),
      notes: [
        `Three-step chains with e=${RATES.e} (visible errors: the agent exits 1) and w=${RATES.w} (plausible wrong answers), unless the row says otherwise; A is retry.maxAttempts. d is the share of wrong answers the world's last-digit check catches and f the false-rejection rate of its brittle check, so the model's recall is d + (1 - d)·f.`,
        "Success: every step done and the hidden check (judgeSimWorld, outside the gate) finds every answer right. z is (measured - predicted) / standard error (binomial for success, sample sd/√runs for attempts); |z| ≤ 4 is the test suite's bar.",
        `replay: the same world logic (seeded draws, the check's last-digit and SHA-256 verdicts) worked out in memory for ${REPLAYS} seeds: success / mean attempts. "runs ≠ replay" counts real runs whose episodes or success differ from the replay of their own seed; it should be 0.`,
        `${episodes} episodes in ${(wallMs / 1000).toFixed(0)} s (${(wallMs / Math.max(1, episodes)).toFixed(0)} ms per episode, world creation included), 4 worlds at a time, gates in bubblewrap.`,
      ],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function row(name: string, c: SimCalibration, replay: { success: number; attempts: number }): Array<string | number> {
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  const margin = (1.959963984540054 * c.attemptsSd) / Math.sqrt(c.runs);
  // With every run alike (a few quick runs), the sample sd is 0 and z says nothing.
  const z = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
  return [
    name,
    c.model.recall!.toFixed(3),
    `${pct(c.success)} (${pct(c.low)}–${pct(c.high)})`,
    pct(c.predicted.success),
    z(c.successZ),
    `${c.meanAttempts.toFixed(2)} (±${margin.toFixed(2)})`,
    c.predicted.expectedAttempts.toFixed(2),
    z(c.attemptsZ),
    `${pct(replay.success)} / ${replay.attempts.toFixed(2)}`,
    c.mismatches.length,
  ];
}

function replayMany(world: Omit<SimWorldOptions, 'seed'>): { success: number; attempts: number } {
  let successes = 0;
  let attempts = 0;
  for (let seed = 0; seed < REPLAYS; seed += 1) {
    const replay = replaySimRun({ ...world, seed });
    if (replay.success) successes += 1;
    attempts += replay.episodes;
  }
  return { success: successes / REPLAYS, attempts: attempts / REPLAYS };
}
