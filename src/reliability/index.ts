/**
 * The arithmetic of long tasks: closed forms for a chain of steps with retries and a verifier,
 * a seeded simulator of the same process, Wilson intervals, a METR-style horizon fit, and the
 * statistics of a world's ledger. Pure functions, no I/O.
 */
export {
  compileChainModel,
  computeChainLength,
  computeStepOutcome,
  type ChainInput,
  type ChainLength,
  type ChainModel,
  type StepOutcome,
} from './chain-model.js';
export {
  computeEffectiveFailure,
  computeEffectiveReliability,
  computeHorizonFromFailure,
  computeHorizonSteps,
  type EffectiveReliabilityInput,
} from './deterministic-retries.js';
export {
  computeFittedHorizon,
  fitHorizon,
  type FittedHorizon,
  type HorizonFit,
  type HorizonFitOptions,
  type HorizonPoint,
} from './horizon-fit.js';
export {
  computeLedgerStats,
  type LedgerStats,
  type LedgerStatsOptions,
  type Proportion,
  type ReasonCount,
  type StatsEpisode,
  type StatsOutcome,
} from './ledger-stats.js';
export {
  fitLogistic,
  isSeparable,
  type LogisticFit,
  type LogisticFitOptions,
  type LogisticMethod,
} from './logistic-fit.js';
export { createRng, type Rng } from './prng.js';
export {
  simulateChain,
  simulateStep,
  type SimulatedLength,
  type SimulatedStep,
  type SimulationOptions,
  type StepEnding,
} from './simulate-chain.js';
export { INVALID_MODEL_INPUT } from './validate.js';
export { computeWilsonInterval, Z_95, type Interval } from './wilson.js';
