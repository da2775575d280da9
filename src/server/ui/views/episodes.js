// Episodes: every attempt, accepted or not, filterable by task and outcome.
import { getJson } from '../api.js';
import { episodeTimeline, TIMELINE_PHASES } from '../episode-timeline.js';
import { badge, fmtCost, fmtDuration, fmtTime, h, link, panel, shortSha, table } from '../dom.js';

export const name = 'episodes';
export const title = () => 'Episodes';

export async function render({ params, navigate }) {
  const task = params.get('task') ?? '';
  const outcome = params.get('outcome') ?? '';
  const query = new URLSearchParams();
  if (task) query.set('task', task);
  if (outcome) query.set('outcome', outcome);
  const [data, timeline] = await Promise.all([getJson(`/api/episodes?${query}`), getJson('/api/timeline')]);

  const select = (label, name, value, options) =>
    h(
      'label',
      null,
      label,
      h(
        'select',
        {
          name,
          onchange: (event) => {
            const next = new URLSearchParams(query);
            if (event.target.value) next.set(name, event.target.value);
            else next.delete(name);
            navigate('/episodes', next);
          },
        },
        h('option', { value: '' }, 'all'),
        options.map((o) => h('option', { value: o, selected: o === value }, o)),
      ),
    );

  const rows = data.episodes.map((e) => ({
    attrs: { 'data-episode': e.id, 'data-outcome': e.outcome },
    cells: [
      link(`#/episodes/${e.id}`, e.id, { class: 'mono' }),
      fmtTime(e.startedAt),
      link(`#/episodes?task=${encodeURIComponent(e.task)}`, e.task),
      e.attempt,
      badge(e.outcome),
      e.reason ? h('div', null, h('code', null, e.reason), e.message ? h('div', { class: 'msg', title: e.message }, e.message) : null) : '',
      e.agent,
      fmtDuration(e.durationMs),
      fmtCost(e.costUsd),
      e.commit ? h('span', { class: 'mono' }, shortSha(e.commit)) : '',
    ],
  }));

  return h(
    'div',
    null,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Episodes'),
      h('p', { class: 'muted' }, `${data.total} shown${task || outcome ? ' (filtered)' : ''}, newest first.`),
    ),
    h(
      'div',
      { class: 'filters' },
      select('Task', 'task', task, data.tasks),
      select('Outcome', 'outcome', outcome, data.outcomes),
      task || outcome ? h('button', { class: 'secondary', onclick: () => navigate('/episodes') }, 'Clear filters') : null,
    ),
    timeline.slots.length > 0
      ? panel(
          'Timeline (a row per worker slot)',
          // As wide as the panel it sits in (main's width less its padding and the panel's): a wider screen gets a longer time axis, not larger text.
          h('div', { class: 'graph-scroll' }, episodeTimeline(timeline, document.getElementById('view').clientWidth - 2 * 24 - 2 * 19)),
          h(
            'div',
            { class: 'legend' },
            TIMELINE_PHASES.map((p) => h('span', null, h('span', { class: `swatch p-${p}` }), p)),
          ),
        )
      : null,
    panel(
      null,
      table(
        [
          'Episode',
          'Started',
          'Task',
          { label: 'Attempt', class: 'num' },
          'Outcome',
          { label: 'Reason', class: 'reason' },
          'Agent',
          { label: 'Duration', class: 'num' },
          { label: 'Cost', class: 'num' },
          'Commit',
        ],
        rows,
        'No episode matches.',
      ),
    ),
  );
}
