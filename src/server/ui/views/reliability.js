// Reliability: what the ledger says about the agents, and what it implies for long chains.
import { getJson } from '../api.js';
import { clockFormat, timeTicks, xyChart } from '../charts.js';
import { fmtCost, fmtDuration, fmtNumber, h, kv, panel, pct, table } from '../dom.js';

export const name = 'reliability';
export const title = () => 'Reliability';

const pct0 = (v) => `${Math.round(v * 100)}%`;
const interval = (p) => (p.rate === null ? '–' : `${pct(p.rate)} (95% CI ${pct(p.low)}–${pct(p.high)}, ${p.count} of ${p.of})`);

export async function render() {
  const r = await getJson('/api/reliability');
  const s = r.stats;
  if (s.episodeSuccess.of === 0) {
    return h(
      'div',
      null,
      h('div', { class: 'page-head' }, h('h1', null, 'Reliability')),
      panel(null, h('p', { class: 'muted' }, 'No episode has been decided yet: nothing to measure.')),
    );
  }
  return h(
    'div',
    null,
    h('div', { class: 'page-head' }, h('h1', null, 'Reliability'), h('p', { class: 'muted' }, `Measured from ${s.counts.episodes} episodes in the ledger.`)),
    h(
      'div',
      { class: 'grid' },
      panel(
        'Per-episode success p',
        h('div', { class: 'stat', 'data-stat': 'p' }, pct(s.episodeSuccess.rate)),
        h('div', { class: 'small muted' }, interval(s.episodeSuccess)),
      ),
      panel(
        'Retries recover',
        h('div', { class: 'stat' }, pct(s.retryRecovery.rate)),
        h('div', { class: 'small muted' }, `${s.retryRecovery.count} of ${s.retryRecovery.of} tasks whose first attempt failed`),
      ),
      panel(
        'Failures that repeat',
        h('div', { class: 'stat' }, pct(s.deterministicFraction.rate)),
        h(
          'div',
          { class: 'small muted' },
          `deterministic fraction c: ${s.deterministicFraction.count} of ${s.deterministicFraction.of} retried failures came back the same`,
        ),
      ),
      panel(
        'What is left',
        s.prediction && s.prediction.tasks === 0
          ? h('p', { class: 'muted' }, 'Every task is done: nothing left to predict.')
          : s.prediction
            ? [
                h('div', { class: 'stat' }, pct(s.prediction.success)),
                h(
                  'div',
                  { class: 'small muted' },
                  `chance that all ${s.prediction.tasks} remaining tasks land with ${s.prediction.attempts} attempts each (p per task ${pct(s.prediction.pTask)})`,
                ),
              ]
            : h('p', { class: 'muted' }, 'nothing to predict'),
      ),
    ),
    h(
      'div',
      { class: 'two' },
      panel('Acceptance over time', acceptanceChart(r.acceptanceOverTime)),
      panel('Success against chain length', chainChart(r.chain)),
    ),
    h(
      'div',
      { class: 'two' },
      panel(
        'Horizons',
        table(
          ['Success threshold', { label: 'Steps (from p)', class: 'num' }, { label: '95% range', class: 'num' }],
          s.horizons.map((x) => [pct0(x.threshold), fmtNumber(x.steps), `${fmtNumber(x.low)} – ${fmtNumber(x.high)}`]),
        ),
        h(
          'p',
          { class: 'note' },
          'ln(threshold) / ln(p): the chain length at which the chance that every step is accepted first time falls to the threshold. The range comes from the interval of p.',
        ),
        h('h3', null, 'Against task length (METR-style fit)'),
        s.humanMinutesFit.fit
          ? table(
              ['Success', { label: 'Human minutes', class: 'num' }, { label: '95% range', class: 'num' }],
              s.humanMinutesFit.fit.horizons.map((x) => [
                pct0(x.threshold),
                fmtNumber(x.minutes),
                x.low === null ? '–' : `${fmtNumber(x.low)} – ${fmtNumber(x.high)}`,
              ]),
            )
          : h('p', { class: 'note' }, `Not fitted: ${s.humanMinutesFit.reason}.`),
      ),
      panel(
        'Acceptance by attempt',
        table(
          ['Attempt', { label: 'Accepted', class: 'num' }, { label: 'Rate (95% CI)', class: 'num' }],
          s.acceptanceByAttempt.map((a) => [a.attempt, `${a.count} of ${a.of}`, `${pct(a.rate)} (${pct(a.low)}–${pct(a.high)})`]),
        ),
        h('h3', null, 'Why attempts did not land'),
        table(
          ['Outcome', 'Reason', { label: 'Count', class: 'num' }],
          [
            ...s.rejectedByReason.map((x) => ['rejected', h('code', null, x.reason), x.count]),
            ...s.failedByReason.map((x) => ['failed', h('code', null, x.reason), x.count]),
          ],
          'Every attempt landed.',
        ),
        h('h3', null, 'Per accepted change'),
        kv([
          ['time', fmtDuration(s.perAcceptedChange.durationMs)],
          ['cost', fmtCost(s.perAcceptedChange.costUsd)],
        ]),
      ),
    ),
  );
}

function bucketLabel(ms) {
  const minutes = ms / 60_000;
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 24 * 60) return `${minutes / 60} h`;
  return `${minutes / 1440} d`;
}

function acceptanceChart(a) {
  if (a.buckets.length === 0) return h('p', { class: 'muted' }, 'No decided episode yet.');
  const min = Date.parse(a.buckets[0].start);
  const max = Date.parse(a.buckets.at(-1).end);
  const dots = a.buckets
    .filter((b) => b.decided > 0)
    .map((b) => ({
      x: (Date.parse(b.start) + Date.parse(b.end)) / 2,
      y: b.rate,
      low: b.low,
      high: b.high,
      class: 'ok',
      title: `${b.accepted} of ${b.decided} accepted`,
    }));
  const cumulative = a.cumulative.map((c) => [Date.parse(c.at), c.rate]);
  const ticks = timeTicks(min, max);
  return [
    xyChart({
      ariaLabel: 'acceptance over time',
      x: { min, max, ticks: ticks.ticks, format: clockFormat(min, max, ticks.step), label: `time (buckets of ${bucketLabel(a.bucketMs)})` },
      y: { min: 0, max: 1, ticks: [0, 0.25, 0.5, 0.75, 1], format: pct0, label: 'accepted' },
      lines: [{ points: cumulative, class: 's-cumulative' }],
      dots,
    }),
    h(
      'div',
      { class: 'legend' },
      h('span', null, h('i', { class: 'dot k-point' }), 'acceptance per bucket, with 95% interval'),
      h('span', null, h('i', { class: 'k-cumulative' }), 'running rate since the start'),
    ),
  ];
}

function chainChart(c) {
  if (!c) return h('p', { class: 'muted' }, 'No decided episode yet.');
  return [
    xyChart({
      ariaLabel: 'success against chain length',
      x: { min: 0, max: c.maxLength, label: 'chain length n (steps)' },
      y: { min: 0, max: 1, ticks: [0, 0.25, 0.5, 0.75, 1], format: pct0, label: 'chain succeeds' },
      lines: [
        { points: c.perEpisode.map((p) => [p.n, p.success]), class: 's-episode' },
        { points: c.perTask.map((p) => [p.n, p.success]), class: 's-task' },
      ],
      dots: c.measured.map((m) => ({ x: m.n, y: m.rate, low: m.low, high: m.high, title: `n = ${m.n}: ${m.successes} of ${m.chains} runs all accepted` })),
    }),
    h(
      'div',
      { class: 'legend' },
      h('span', null, h('i', { class: 'k-episode' }), `p^n, p = ${pct(c.p)} (first attempts)`),
      h('span', null, h('i', { class: 'dash k-task' }), `p_task^n with ${c.attempts} attempts, p_task = ${pct(c.pTask)}`),
      h('span', null, h('i', { class: 'dot k-measured' }), 'measured: runs of n consecutive episodes all accepted, 95% interval'),
    ),
  ];
}
