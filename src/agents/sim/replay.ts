import { createHash } from 'node:crypto';
import { computeSimTruth, formatSimNote, formatSimStep, simStepId } from './chain.js';
import { drawSimAttempt } from './draw.js';
import { SIM_WORLD_DEFAULTS, type SimWorldOptions } from './world.js';

/** What one run of a sim-chain world must come to. */
export interface SimReplay {
  /** Every step accepted and right. */
  success: boolean;
  /** Episodes the run takes, the attempts at a step that gave up included. */
  episodes: number;
  /** Steps accepted before the run ended. */
  done: number;
  /** Accepted steps whose answer is wrong. */
  wrong: number;
  /**
   * A race round in which racers with different answers passed: which of them won is the order
   * their gates finished in, which no replay knows (it takes the first racer's). Such a run is held
   * against the model, not against its replay.
   */
  ambiguous: boolean;
}

/**
 * Works out, without git, a sandbox or the orchestrator, what a run of a sim-chain world must do:
 * the agent's seeded draws replayed attempt by attempt, and the verdicts of checks/steps.sh
 * recomputed (last digit, and SHA-256 of the file below f·2^32 for the brittle check). A real run
 * that differs from its replay means Genesis did not run an episode, the gate or the retry policy
 * the way the model assumes; it is also a fast way to simulate many runs of the same world.
 */
export function replaySimRun(options: SimWorldOptions = {}): SimReplay {
  const o = { ...SIM_WORLD_DEFAULTS, ...options };
  const rates = { e: o.e, w: o.w, d: o.d, seed: o.seed };
  let previous = 0;
  let episodes = 0;
  let done = 0;
  let wrong = 0;
  let ambiguous = false;
  // Each racer of a round is an attempt of its own: round r runs attempts (r − 1)·race + 1 … r·race, all of them started.
  const passes = (step: number, attempt: number): number | null => {
    const draw = drawSimAttempt(rates, simStepId(step), attempt);
    if (draw.outcome === 'visible-error') return null;
    const answer = previous + step + draw.offset;
    const content = formatSimStep(answer, formatSimNote(o.seed, attempt));
    const lastDigitOk = answer % 10 === (previous + step) % 10;
    const hash = Number.parseInt(createHash('sha256').update(content).digest('hex').slice(0, 8), 16);
    return lastDigitOk && !(hash < o.f * 4294967296) ? answer : null;
  };
  for (let step = 1; step <= o.steps; step += 1) {
    let accepted: number | null = null;
    for (let round = 0; round < o.attempts && accepted === null; round += 1) {
      episodes += o.race;
      const passed = Array.from({ length: o.race }, (_, k) => passes(step, round * o.race + k + 1)).filter((a) => a !== null);
      if (new Set(passed).size > 1) ambiguous = true;
      accepted = passed[0] ?? null;
    }
    if (accepted === null) break;
    done += 1;
    if (accepted !== computeSimTruth(step)) wrong += 1;
    previous = accepted;
  }
  return { success: done === o.steps && wrong === 0, episodes, done, wrong, ambiguous };
}
