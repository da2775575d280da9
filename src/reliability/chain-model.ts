import { assertInteger, assertProbability, rejectModelInput } from './validate.js';

/**
 * One step of a chain as the user describes it: what a single attempt does, how good the
 * verifier is, and how many attempts a step may take.
 */
export interface ChainInput {
  /** Probability that an attempt fails visibly (an exit code, an exception): always retried. */
  e: number;
  /** Probability that an attempt is silently wrong: only a verifier can catch it. */
  w: number;
  /** Probability that the verifier rejects a wrong result (recall). @default 0 (no verifier) */
  recall?: number;
  /** Probability that the verifier rejects a right result. @default 0 */
  falseReject?: number;
  /** Attempts allowed per step, the first included. @default 1 */
  attempts?: number;
  /**
   * Episodes raced at once per attempt (a task's `race: N`): the first the verifier accepts wins.
   * A round is retried only when all N are; it costs N attempts and takes one attempt's time. @default 1
   */
  race?: number;
}

/** A validated {@link ChainInput} with every default filled in and c = 1 − e − w derived. */
export interface ChainModel {
  e: number;
  w: number;
  c: number;
  recall: number;
  falseReject: number;
  attempts: number;
  race: number;
}

/** What one step does, in closed form. The four outcome probabilities follow from the model. */
export interface StepOutcome {
  /** r: probability that one attempt ends in a retry (visible error or verifier rejection). */
  retry: number;
  /** a·S_A: probability that the step ends accepted and right. */
  correct: number;
  /** b·S_A: probability that the step ends accepted but wrong (the run carries on, doomed). */
  silentlyWrong: number;
  /** r^A: probability that every attempt was retried, so the step gives up and the run stops. */
  givesUp: number;
  /** Expected attempts spent on the step: S_A rounds, each of `race` attempts. */
  attempts: number;
  /** S_A: expected rounds (with a race, each takes one attempt's time while it costs `race` attempts). */
  rounds: number;
}

/** Checks a {@link ChainInput} and fills in its defaults; throws `invalid-model-input` when it is out of range. */
export function compileChainModel(input: ChainInput): ChainModel {
  const recall = input.recall ?? 0;
  const falseReject = input.falseReject ?? 0;
  const attempts = input.attempts ?? 1;
  const race = input.race ?? 1;
  assertProbability('e (visible error rate)', input.e);
  assertProbability('w (silent error rate)', input.w);
  assertProbability('recall (verifier recall)', recall);
  assertProbability('falseReject (verifier false-rejection rate)', falseReject);
  assertInteger('attempts', attempts, 1);
  assertInteger('race', race, 1);
  // A tolerance so that e = 0.1 + 0.2 (0.30000000000000004) with w = 0.7 is accepted.
  if (input.e + input.w > 1 + 1e-12) {
    rejectModelInput(`e + w must be at most 1, got ${input.e} + ${input.w} = ${input.e + input.w}`);
  }
  const c = Math.max(0, 1 - (input.e + input.w));
  return { e: input.e, w: input.w, c, recall, falseReject, attempts, race };
}

/** 1 + r + … + r^(A−1), computed without cancellation when r is close to 1. */
function geometricSum(r: number, terms: number): number {
  if (r >= 1) return terms;
  if (r === 0) return 1;
  return -Math.expm1(terms * Math.log(r)) / (1 - r);
}

/** The closed form of one step: retry probability, the three endings, and the expected attempts. */
export function computeStepOutcome(input: ChainInput): StepOutcome {
  const m = compileChainModel(input);
  const single = Math.min(1, m.e + m.c * m.falseReject + m.w * m.recall);
  const acceptedRight = m.c * (1 - m.falseReject);
  const acceptedWrongly = m.w * (1 - m.recall);
  // A race round is retried only when every racer is (r^N); otherwise the first accepted racer
  // wins, right or wrong in proportion a : b, as racers are alike. N = 1 is the single attempt.
  const retry = single ** m.race;
  const acceptedAny = acceptedRight + acceptedWrongly;
  // (With one racer the share is the attempt's own a and b, kept exact.)
  const share = (x: number) => (m.race === 1 ? x : acceptedAny === 0 ? 0 : ((1 - retry) * x) / acceptedAny);
  const accepted = share(acceptedRight);
  const acceptedWrong = share(acceptedWrongly);
  const rounds = geometricSum(retry, m.attempts);
  return {
    retry,
    correct: accepted * rounds,
    silentlyWrong: acceptedWrong * rounds,
    givesUp: retry ** m.attempts,
    attempts: rounds * m.race,
    rounds,
  };
}

/** A chain of n steps in closed form. */
export interface ChainLength {
  steps: number;
  /** (a·S_A)^n: every step ended accepted and right. */
  success: number;
  /** S_A · Σ_{i<n} (1 − r^A)^i: a run stops at the first step that gives up. */
  expectedAttempts: number;
}

/** Closed-form success and expected attempts of a chain of `steps` steps (an integer >= 1). */
export function computeChainLength(step: StepOutcome, steps: number): ChainLength {
  assertInteger('steps', steps, 1);
  const g = step.givesUp;
  // Σ_{i<n} (1 − g)^i = (1 − (1 − g)^n) / g, with expm1/log1p so a tiny g keeps its digits.
  const reached = g === 0 ? steps : -Math.expm1(steps * Math.log1p(-g)) / g;
  return { steps, success: step.correct ** steps, expectedAttempts: step.attempts * reached };
}
