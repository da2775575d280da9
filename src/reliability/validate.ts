import { GenesisError } from '../errors/genesis-error.js';

/** The error code of every rejected model parameter, so scripts and tests can match on it. */
export const INVALID_MODEL_INPUT = 'invalid-model-input';

function reject(message: string): never {
  throw new GenesisError(INVALID_MODEL_INPUT, message, {
    hint: 'check the numbers passed to the reliability model',
  });
}

/** Throws unless `value` is a probability in [0, 1]. `name` is how the user knows the parameter. */
export function assertProbability(name: string, value: number): void {
  // NaN fails both comparisons, so it is rejected here too.
  if (!(value >= 0 && value <= 1)) reject(`${name} must be a probability in [0, 1], got ${value}`);
}

/** Throws unless `value` lies strictly between 0 and 1 (a success threshold, where 0 and 1 have no horizon). */
export function assertOpenProbability(name: string, value: number): void {
  if (!(value > 0 && value < 1)) reject(`${name} must be in (0, 1), exclusive, got ${value}`);
}

/** Throws unless `value` is a whole number of at least `min` (attempts, steps, runs). */
export function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    reject(`${name} must be an integer >= ${min}, got ${value}`);
  }
}

/** Throws unless `value` is a finite number greater than 0 (human minutes). */
export function assertPositive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) reject(`${name} must be a finite number > 0, got ${value}`);
}

/** Throws with the model's error code; for rules that involve several parameters. */
export function rejectModelInput(message: string): never {
  return reject(message);
}
