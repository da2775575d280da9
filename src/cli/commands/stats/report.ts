import { withCliName } from '../../invocation.js';
import type { LedgerStats, Proportion } from '../../../reliability/index.js';
import type { ChangeCosts } from '../../../ledger/change-costs.js';
import type { RaceWins } from '../../../ledger/race-wins.js';
import { formatSeconds, formatTable, jsonNumbers, SPEND_HEADERS, spendCells } from '../../output.js';
import type { Calibration, MeasuredRate } from '../../../world/calibration.js';

/** Everything `genesis stats` prints: which world, and what its ledger measures. */
export interface StatsReport {
  world: {
    name: string;
    path: string;
    branch: string;
    head: string;
    tasks: number;
    tasksDone: number;
    /** Episodes without a verdict yet; they are not in the statistics. */
    running: number;
    maxAttempts: number;
  };
  stats: LedgerStats;
  spend: ChangeCosts;
  races?: RaceWins;
  /** The gate's recall d and false-rejection rate f on this project, as genesis calibrate measured them. */
  verifier?: Calibration | null;
}

/** The JSON of `genesis stats`: `world`, then every field of the reliability module's LedgerStats. */
export function toStatsJson(report: StatsReport): unknown {
  return jsonNumbers({ world: report.world, ...report.stats, spend: report.spend, races: report.races ?? null, verifier: report.verifier ?? null });
}

const percent = (value: number | null): string => (value === null ? '-' : `${(value * 100).toFixed(1)}%`);
const interval = (p: { low: number | null; high: number | null }, show: (v: number | null) => string = percent): string =>
  p.low === null || p.high === null ? '-' : `${show(p.low)} - ${show(p.high)}`;
const steps = (value: number | null): string => (value === null ? '-' : Number.isFinite(value) ? value.toFixed(2) : 'infinite');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function proportionLine(p: Proportion, noun: string): string {
  return p.of === 0 ? `no data (no ${noun} yet)` : `${p.count} of ${p.of} ${noun} (${percent(p.rate)}, 95% interval ${interval(p)})`;
}

/** The readable report of `genesis stats`. */
/** `1 episode`, `3 episodes`. */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

type PerChange = StatsReport['stats']['perAcceptedChange'];

/** Episode time per accepted change, as a sentence: what is known, and why the rest is not. */
export function describeTimePerChange(m: PerChange, episodes: number): string {
  const over = `${seconds(m.knownDurationMs)} over ${plural(episodes - m.episodesWithoutDuration, 'timed episode')}`;
  if (m.accepted === 0) return `time: none yet, no change has been accepted (${over}).`;
  if (m.durationMs === null) return `time: not known, ${plural(m.episodesWithoutDuration, 'episode')} of ${episodes} recorded no duration (${over}).`;
  return `time: ${seconds(m.durationMs)} of episode time per change (${seconds(m.knownDurationMs)} over ${plural(episodes, 'episode')}).`;
}

/** What the agents reported spending per accepted change, as a sentence. */
export function describeCostPerChange(m: PerChange, episodes: number): string {
  const reported = episodes - m.episodesWithoutCost;
  const known = reported > 0 ? ` (the ${plural(reported, 'episode')} that reported one spent $${m.knownCostUsd.toFixed(2)})` : '';
  if (m.accepted === 0) return `cost: none yet, no change has been accepted${known}.`;
  if (m.costUsd === null)
    return reported === 0
      ? `cost: not known, no episode reported a cost (the agent reports none; see agent.price).`
      : `cost: not known, ${plural(m.episodesWithoutCost, 'episode')} of ${episodes} reported no cost${known}.`;
  return `cost: $${m.costUsd.toFixed(4)} per change ($${m.knownCostUsd.toFixed(2)} in all).`;
}

export function renderStats(report: StatsReport): string {
  const { world, stats: s } = report;
  const c = s.counts;
  const out: string[] = [
    `world ${world.name} (${world.path}): ${world.tasksDone} of ${world.tasks} tasks done, ${world.branch} @ ${world.head.slice(0, 12)}`,
    `${c.episodes} episodes: ${c.accepted} accepted, ${c.rejected} rejected by the gate, ${c.failed} failed, ${c.abandoned} abandoned` +
      (world.running > 0 ? ` (and ${world.running} still running, not counted)` : ''),
  ];
  out.push(...verifierLines(report.verifier));
  if (c.episodes === 0) return [...out, '', withCliName('No finished episodes yet: run `genesis run` first.')].join('\n');

  const reasons = [...s.rejectedByReason.map((r) => ['rejected', r.reason, r.count]), ...s.failedByReason.map((r) => ['failed', r.reason, r.count])];
  if (reasons.length > 0) out.push('', 'Why episodes did not land', formatTable(['outcome', 'reason', 'episodes'], reasons));

  out.push(
    '',
    'Acceptance by attempt number',
    formatTable(
      ['attempt', 'accepted', 'decided', 'rate', '95% interval'],
      s.acceptanceByAttempt.map((a) => [a.attempt, a.count, a.of, percent(a.rate), interval(a)]),
    ),
    '',
    `Retries recovered:       ${proportionLine(s.retryRecovery, 'tasks whose first attempt failed')}${s.retryRecovery.tasks.length > 0 ? `: ${s.retryRecovery.tasks.join(', ')}` : ''}`,
    `Deterministic failures:  ${proportionLine(s.deterministicFraction, 'failed attempts followed by one that failed the same way')}`,
    `Per-episode success p:   ${proportionLine(s.episodeSuccess, 'decided episodes accepted')}`,
  );

  if (s.episodeSuccess.of > 0) {
    out.push(
      '',
      'Horizons that p implies (chain length at which success falls to the threshold)',
      formatTable(
        ['threshold', 'steps', '95% interval'],
        s.horizons.map((h) => [percent(h.threshold), steps(h.steps), interval(h, steps)]),
      ),
    );
  }

  const money = s.perAcceptedChange;
  out.push('', `Per accepted change:     ${describeTimePerChange(money, c.episodes)}`, `                         ${describeCostPerChange(money, c.episodes)}`);
  out.push(
    '',
    'What each task spent (tokens and cost as the agents reported them; >= where some reported nothing)',
    formatTable(
      ['task', 'landed', ...SPEND_HEADERS, 'to land'],
      report.spend.tasks.map((t) => [t.task, t.landed, ...spendCells(t), formatSeconds(t.toLandingMs)]),
    ),
    '',
  );

  const races = report.races;
  if (races && races.races > 0) {
    out.push(
      `Races:                   ${races.races} (${races.decided} won by a racer); wins by agent and model`,
      formatTable(
        ['agent', 'model', 'raced', 'won', 'share'],
        races.byAgent.map((a) => [a.agent, a.model ?? '-', a.raced, a.won, percent(a.won / a.raced)]),
      ),
      '',
    );
  }

  const fit = s.humanMinutesFit.fit;
  if (fit) {
    out.push(
      '',
      `METR-style fit over ${fit.points} episodes of ${fit.tasks} tasks: P(success) = σ(${fit.intercept.toFixed(3)} ${fit.slope < 0 ? '-' : '+'} ${Math.abs(fit.slope).toFixed(3)}·log2(minutes))`,
      formatTable(
        ['success', 'horizon (human minutes)', '95% interval'],
        fit.horizons.map((h) => [percent(h.threshold), steps(h.minutes), interval(h, steps)]),
      ),
      '',
    );
  } else {
    out.push(`METR-style fit:          not available: ${s.humanMinutesFit.reason ?? 'no reason given'}`);
  }

  const p = s.prediction;
  if (p && p.tasks > 0) {
    out.push(
      `What is left:            ${plural(p.tasks, 'task')}; with ${p.attempts} attempts each and ${percent(p.deterministic)} deterministic failures, ` +
        `a task lands with ${percent(p.pTask)} and all of them with ${percent(p.success)}`,
    );
  } else {
    out.push('What is left:            nothing: every task is done');
  }
  return out.join('\n');
}

/** The verifier's terms, measured on the project by genesis calibrate: what the model's d and f are for this world. */
function verifierLines(v: Calibration | null | undefined): string[] {
  const line = (name: string, r: MeasuredRate | undefined, noun: string) =>
    r ? `  ${name} = ${percent(r.rate)} (95% interval ${interval(r)}): ${r.count} of ${r.of} ${noun}, at ${r.head.slice(0, 12)}` : `  ${name}: not measured`;
  if (!v) return ['', withCliName('Verifier: not calibrated (genesis calibrate measures its recall d and false rejections f on this project)')];
  return [
    '',
    "Verifier, measured by genesis calibrate (the model's d and f for this world)",
    line('recall d', v.recall, 'mutants caught'),
    line('false rejections f', v.falseRejection, "of the project's own commits rejected"),
  ];
}
