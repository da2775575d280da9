import { rejectModelInput } from './validate.js';

/** How the coefficients were estimated: plain maximum likelihood, or Firth's penalised likelihood. */
export type LogisticMethod = 'mle' | 'firth';

/** Settings of {@link fitLogistic}. */
export interface LogisticFitOptions {
  /**
   * 'auto' uses maximum likelihood unless the outcomes are separable by x (then the MLE is
   * infinite), where it falls back to Firth's penalty, which always gives finite estimates.
   * @default 'auto'
   */
  method?: LogisticMethod | 'auto';
  /** @default 100 */
  maxIterations?: number;
  /** Stop when no coefficient moves by more than this. @default 1e-10 */
  tolerance?: number;
}

/** P(y = 1 | x) = σ(intercept + slope·x), fitted by Newton's method. */
export interface LogisticFit {
  intercept: number;
  slope: number;
  method: LogisticMethod;
  /** True when successes and failures are separated by x (or only one of them occurs). */
  separable: boolean;
  converged: boolean;
  iterations: number;
  /** Log-likelihood at the estimate (without Firth's penalty). */
  logLikelihood: number;
}

function softplus(eta: number): number {
  return eta > 0 ? eta + Math.log1p(Math.exp(-eta)) : Math.log1p(Math.exp(eta));
}

function sigmoid(eta: number): number {
  return eta >= 0 ? 1 / (1 + Math.exp(-eta)) : Math.exp(eta) / (1 + Math.exp(eta));
}

/** True when some threshold on x puts every success on one side and every failure on the other. */
export function isSeparable(x: readonly number[], y: readonly boolean[]): boolean {
  let min1 = Infinity,
    max1 = -Infinity,
    min0 = Infinity,
    max0 = -Infinity;
  x.forEach((xi, i) => {
    if (y[i]) {
      min1 = Math.min(min1, xi);
      max1 = Math.max(max1, xi);
    } else {
      min0 = Math.min(min0, xi);
      max0 = Math.max(max0, xi);
    }
  });
  // Ties at the boundary (quasi-complete separation) also send the MLE to infinity.
  return max0 <= min1 || max1 <= min0;
}

interface Evaluation {
  objective: number;
  logLikelihood: number;
  step: [number, number];
}

// One Newton step at (b0, b1), on x already centred: the score, the Fisher information, and
// (for Firth) the hat-matrix adjustment y − p + h(½ − p) and the ½·log|I| penalty.
function evaluate(x: readonly number[], y: readonly boolean[], b0: number, b1: number, firth: boolean): Evaluation {
  let i00 = 0,
    i01 = 0,
    i11 = 0,
    logLikelihood = 0;
  const p = x.map((xi, i) => {
    const eta = b0 + b1 * xi;
    logLikelihood += (y[i] ? eta : 0) - softplus(eta);
    const pi = sigmoid(eta);
    const w = pi * (1 - pi);
    i00 += w;
    i01 += w * xi;
    i11 += w * xi * xi;
    return pi;
  });
  const det = i00 * i11 - i01 * i01;
  if (!(det > 0)) return { objective: -Infinity, logLikelihood, step: [0, 0] };
  const [v00, v01, v11] = [i11 / det, -i01 / det, i00 / det];
  let u0 = 0,
    u1 = 0;
  x.forEach((xi, i) => {
    const pi = p[i] as number;
    let residual = (y[i] ? 1 : 0) - pi;
    if (firth) {
      const h = pi * (1 - pi) * (v00 + 2 * v01 * xi + v11 * xi * xi);
      residual += h * (0.5 - pi);
    }
    u0 += residual;
    u1 += residual * xi;
  });
  const objective = logLikelihood + (firth ? 0.5 * Math.log(det) : 0);
  return { objective, logLikelihood, step: [v00 * u0 + v01 * u1, v01 * u0 + v11 * u1] };
}

/**
 * Logistic regression of a 0/1 outcome on one covariate by maximum likelihood (Newton's method,
 * which for logistic regression is IRLS), with step halving so the likelihood never falls.
 * Throws `invalid-model-input` with fewer than two points or fewer than two distinct x values.
 */
export function fitLogistic(x: readonly number[], y: readonly boolean[], options: LogisticFitOptions = {}): LogisticFit {
  if (x.length !== y.length) rejectModelInput(`x and y must have the same length, got ${x.length} and ${y.length}`);
  if (x.length < 2) rejectModelInput(`a logistic fit needs at least 2 points, got ${x.length}`);
  if (!x.every(Number.isFinite)) rejectModelInput('every x of a logistic fit must be a finite number');
  if (Math.min(...x) === Math.max(...x)) {
    rejectModelInput('a logistic fit needs at least two distinct x values (task lengths) to estimate a slope');
  }
  const separable = isSeparable(x, y);
  const method: LogisticMethod = options.method === undefined || options.method === 'auto' ? (separable ? 'firth' : 'mle') : options.method;
  const firth = method === 'firth';
  const maxIterations = options.maxIterations ?? 100;
  const tolerance = options.tolerance ?? 1e-10;
  // Centring x keeps the information matrix well conditioned when x is far from 0.
  const centre = x.reduce((sum, xi) => sum + xi, 0) / x.length;
  const xc = x.map((xi) => xi - centre);

  const successes = y.filter(Boolean).length;
  const start = Math.log((successes + 0.5) / (y.length - successes + 0.5));
  let b0 = start,
    b1 = 0;
  let current = evaluate(xc, y, b0, b1, firth);
  let converged = false;
  let iterations = 0;
  while (iterations < maxIterations && !converged) {
    iterations += 1;
    let scale = 1;
    let candidate = current;
    let [n0, n1] = [b0, b1];
    for (let halving = 0; halving < 30; halving += 1) {
      [n0, n1] = [b0 + scale * current.step[0], b1 + scale * current.step[1]];
      candidate = evaluate(xc, y, n0, n1, firth);
      if (candidate.objective >= current.objective - 1e-12) break;
      scale /= 2;
    }
    converged = Math.max(Math.abs(n0 - b0), Math.abs(n1 - b1)) < tolerance;
    [b0, b1, current] = [n0, n1, candidate];
  }
  return {
    intercept: b0 - b1 * centre,
    slope: b1,
    method,
    separable,
    converged,
    iterations,
    logLikelihood: current.logLikelihood,
  };
}
