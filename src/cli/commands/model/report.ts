import type { ChainLength, ChainModel, SimulatedLength, StepOutcome } from '../../../reliability/index.js';
import { formatTable, jsonNumbers } from '../../output.js';

/** Everything `genesis model chain` computed, before it is printed. */
export interface ChainReport {
  model: ChainModel;
  step: StepOutcome;
  lengths: ChainLength[];
  /** Simulated lengths: the requested ones, and any extra ones drawn on the chart. */
  simulated: SimulatedLength[];
  horizons: Array<{ threshold: number; steps: number }>;
}

/** Everything `genesis model horizon` computed. */
export interface HorizonReport {
  p: number;
  attempts: number;
  deterministic: number;
  pEff: number;
  /** 1 − p_eff, kept apart because p_eff rounds to 1 long before the failure rate reaches 0. */
  failure: number;
  horizons: Array<{ threshold: number; steps: number }>;
}

/** The JSON of `genesis model chain` (field names are fixed; fields may be added). */
export function toChainJson(report: ChainReport): unknown {
  return jsonNumbers({
    model: report.model,
    step: report.step,
    horizons: report.horizons,
    lengths: report.lengths.map((length) => {
      const sim = report.simulated.find((item) => item.steps === length.steps);
      return sim === undefined
        ? length
        : {
            ...length,
            simulated: {
              runs: sim.runs,
              seed: sim.seed,
              success: sim.success,
              low: sim.low,
              high: sim.high,
              meanAttempts: sim.meanAttempts,
              attemptsLow: sim.attemptsLow,
              attemptsHigh: sim.attemptsHigh,
            },
          };
    }),
  });
}

/** The JSON of `genesis model horizon`; an infinite horizon (p_eff = 1) is null. */
export function toHorizonJson(report: HorizonReport): unknown {
  return jsonNumbers({
    ...report,
    horizons: report.horizons.map((h) => ({
      ...h,
      wholeSteps: Number.isFinite(h.steps) ? Math.floor(h.steps) : null,
    })),
  });
}

/** A probability as a percentage, with more digits when it is tiny (a give-up rate of 0.0125%). */
function percent(value: number): string {
  const p = value * 100;
  if (p === 0 || p === 100 || p >= 0.01) return `${p.toFixed(2)}%`;
  return `${p.toPrecision(2)}%`;
}

function steps(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'infinite';
}

/** The tables `genesis model chain` prints without --json. */
export function renderChain(report: ChainReport): string {
  const m = report.model;
  const verifier = m.recall > 0 || m.falseReject > 0 ? `verifier recall ${percent(m.recall)}, false rejections ${percent(m.falseReject)}` : 'no verifier';
  const s = report.step;
  const stepTable = formatTable(
    ['retry', 'correct', 'silently wrong', 'gives up', 'attempts'],
    [[percent(s.retry), percent(s.correct), percent(s.silentlyWrong), percent(s.givesUp), s.attempts.toFixed(4)]],
  );
  const simulatedHeaders = report.simulated.length > 0 ? ['simulated', '95% interval', 'sim. attempts'] : [];
  const lengthRows = report.lengths.map((length) => {
    const sim = report.simulated.find((item) => item.steps === length.steps);
    const simCells =
      sim === undefined
        ? []
        : [
            percent(sim.success),
            `${percent(sim.low)} - ${percent(sim.high)}`,
            `${sim.meanAttempts.toFixed(3)} (+/- ${(sim.attemptsHigh - sim.meanAttempts).toFixed(3)})`,
          ];
    return [length.steps, percent(length.success), length.expectedAttempts.toFixed(3), ...simCells];
  });
  const horizonLine = report.horizons.map((h) => `${percent(h.threshold)} after ${steps(h.steps)} steps`).join(', ');
  return [
    `One step: e ${percent(m.e)} visible, w ${percent(m.w)} silent, ${m.attempts} attempt(s)${m.race > 1 ? ` of ${m.race} racers each (${s.rounds.toFixed(4)} rounds: the time of that many attempts)` : ''}, ${verifier}`,
    '',
    stepTable,
    '',
    formatTable(['steps', 'success', 'expected attempts', ...simulatedHeaders], lengthRows),
    '',
    `Chain success falls to ${horizonLine}.`,
    ...(report.simulated.length > 0 ? [`Simulated: ${report.simulated[0]?.runs} runs per length, seed ${report.simulated[0]?.seed}.`] : []),
  ].join('\n');
}

/** The table `genesis model horizon` prints without --json. */
export function renderHorizon(report: HorizonReport): string {
  return [
    `p ${report.p}, ${report.attempts} attempt(s), ${percent(report.deterministic)} of failures deterministic: p_eff = ${report.pEff}`,
    '',
    formatTable(
      ['threshold', 'horizon (steps)', 'whole steps'],
      report.horizons.map((h) => [percent(h.threshold), steps(h.steps), Number.isFinite(h.steps) ? Math.floor(h.steps) : 'infinite']),
    ),
  ].join('\n');
}

/** Chain lengths worth simulating for a chart up to `maxSteps`: about ten, evenly spaced. */
export function chooseChartLengths(maxSteps: number): number[] {
  const count = Math.min(maxSteps, 10);
  return [...new Set(Array.from({ length: count }, (_, i) => Math.max(1, Math.round(((i + 1) * maxSteps) / count))))];
}

/** What {@link renderSuccessChart} draws. */
export interface SuccessChart {
  maxSteps: number;
  /** Closed-form success at a chain length, drawn as a line of dots. */
  closedForm: (steps: number) => number;
  /** Simulated points, drawn as `o` with their interval as `|`. */
  points: ReadonlyArray<{ steps: number; success: number; low: number; high: number }>;
  /** @default 60 */
  width?: number;
  /** @default 16 */
  height?: number;
}

/** An ASCII chart of success against chain length, 1 to maxSteps on x, success on y. */
export function renderSuccessChart(chart: SuccessChart): string {
  const width = chart.width ?? 60;
  const height = chart.height ?? 16;
  const stepAt = (col: number) => 1 + (col * (chart.maxSteps - 1)) / (width - 1);
  const colOf = (n: number) => (chart.maxSteps === 1 ? 0 : Math.round(((n - 1) * (width - 1)) / (chart.maxSteps - 1)));
  const line = Array.from({ length: width }, (_, col) => chart.closedForm(stepAt(col)));
  const lowest = Math.min(...line, ...chart.points.map((point) => point.low));
  // Start the y axis at the tenth below the lowest value, so 0.90 to 1.00 is not a flat line.
  const yMin = Math.max(0, Math.floor(lowest * 10 - 1e-9) / 10);
  const rowOf = (y: number) => Math.round(((1 - y) / (1 - yMin || 1)) * (height - 1));
  const grid = Array.from({ length: height }, () => Array.from({ length: width }, () => ' '));
  const put = (row: number, col: number, ch: string) => {
    const cells = grid[Math.min(height - 1, Math.max(0, row))];
    if (cells !== undefined && col >= 0 && col < width) cells[col] = ch;
  };
  line.forEach((y, col) => {
    put(rowOf(y), col, '.');
  });
  for (const point of chart.points) {
    const col = colOf(point.steps);
    for (let row = rowOf(point.high); row <= rowOf(point.low); row += 1) put(row, col, '|');
    put(rowOf(point.success), col, 'o');
  }
  const labelEvery = Math.max(1, Math.floor((height - 1) / 4));
  const rows = grid.map((cells, row) => {
    const y = 1 - (row * (1 - yMin)) / (height - 1);
    const label = row % labelEvery === 0 || row === height - 1 ? `${(y * 100).toFixed(0)}%`.padStart(5) : '     ';
    return `${label} |${cells.join('')}`.trimEnd();
  });
  const axis = `      +${'-'.repeat(width)}`;
  const middle = chart.maxSteps >= 3 ? String(Math.round(chart.maxSteps / 2)) : '';
  const ticks = `       1${middle.padStart(Math.floor(width / 2) - 1)}${String(chart.maxSteps).padStart(width - Math.floor(width / 2))}`;
  const legend =
    chart.points.length > 0
      ? '      . closed form   o simulated   | simulated 95% interval'
      : '      . closed form   (add --simulate <runs> to draw simulated points)';
  return ['success', ...rows, axis, ticks, `${' '.repeat(6 + Math.floor(width / 2) - 5)}chain length (steps)`, legend].join('\n');
}
