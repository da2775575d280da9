/**
 * The conventions of a sim-chain world (worlds/sim-chain), shared by the `sim` agent that works
 * in it, the generator that writes it and the hidden check that judges it.
 *
 * Step i (task `t01`, `t02`, …) writes `steps/tNN.txt` holding `answer: N`, where N is the answer
 * of step i − 1 plus i (step 0's answer is 0), so step i is right when N = i(i + 1)/2. The world's
 * visible check (checks/steps.sh, run by the gate) only compares the last digit of N with the
 * previous answer plus i: it catches some wrong answers and misses others, as real tests do.
 */

/** The id of step `index` (1-based): `t01`, `t02`, …, `t10`, …. */
export function simStepId(index: number): string {
  return `t${String(index).padStart(2, '0')}`;
}

/** The 1-based index of a sim-chain task id, or null when the id is not one. */
export function parseSimStepId(id: string): number | null {
  const match = /^t(\d+)$/.exec(id);
  const index = match ? Number(match[1]) : Number.NaN;
  return Number.isInteger(index) && index >= 1 ? index : null;
}

/** Where step `index` writes its answer, relative to the world root. */
export function simStepPath(index: number): string {
  return `steps/${simStepId(index)}.txt`;
}

/** The true answer of step `index`: 1 + 2 + … + index. */
export function computeSimTruth(index: number): number {
  return (index * (index + 1)) / 2;
}

/**
 * The content of a step file. The note names who wrote it and when, as a commit message would;
 * it makes every attempt's file differ, which the world's brittle check hashes.
 */
export function formatSimStep(answer: number, note: string): string {
  return `answer: ${answer}\nnote: ${note}\n`;
}

/** The note the sim agent signs a step file with: who, which seed, which attempt. */
export function formatSimNote(seed: number, attempt: number): string {
  return `written by the sim agent, seed ${seed}, attempt ${attempt}`;
}

/** The answer a step file holds, or null when it holds none (the check rejects that too). */
export function parseSimAnswer(text: string): number | null {
  const match = /^answer: (\d+)$/m.exec(text);
  return match ? Number(match[1]) : null;
}
