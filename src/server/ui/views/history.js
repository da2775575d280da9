// Accepted history: every commit on the accepted branch, newest first, with its evidence.
import { getJson } from '../api.js';
import { clockFormat, timeTicks, xyChart } from '../charts.js';
import { fmtTime, h, link, panel, shortSha, spendLine } from '../dom.js';

export const name = 'history';

/** What a commit no episode made says after its subject: what made it (the API's `made`). */
const MADE = {
  init: "(the world's first commit, genesis init)",
  adopt: "(the world's first accepted commit: the adopted repository's head, genesis init --adopt)",
  history: "(the adopted repository's own history, from before Genesis)",
  reopen: '(a task reopened, genesis task reopen)',
  amend: '(an amendment, genesis amend)',
  'task-add': '(a task added, genesis task add)',
  unattributed: '(made outside Genesis)',
};
export const title = () => 'Accepted history';

export async function render() {
  const history = await getJson('/api/history');
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Accepted history'),
      h('p', { class: 'muted' }, `${history.total} commits on ${history.branch}; every one passed the gate.`),
    ),
    scoreChart(history.commits),
    panel(
      null,
      h(
        'ol',
        { class: 'timeline' },
        history.commits.map((c) =>
          h(
            'li',
            { class: c.made === 'episode' ? 'accepted' : 'initial', 'data-commit': c.commit, 'data-made': c.made },
            h(
              'div',
              { class: 'head' },
              h('span', { class: 'subject' }, MADE[c.made] ? `${c.subject} ${MADE[c.made]}` : c.subject),
              h('span', { class: 'mono muted' }, shortSha(c.commit)),
            ),
            h(
              'div',
              { class: 'meta' },
              fmtTime(c.date),
              c.task ? [' · task ', h('strong', null, c.task), ` · attempt ${c.attempt ?? '?'}`, ` · agent ${c.agent ?? '?'}`] : null,
              c.episode ? [' · ', link(`#/episodes/${c.episode}`, `episode ${c.episode}`)] : null,
            ),
            c.spend
              ? h('div', { class: 'meta spend', title: 'what the change took: every attempt of its task since its previous change' }, spendLine(c.spend))
              : null,
            c.verdict || c.verified ? h('div', { class: 'gate', title: 'gate summary' }, c.verdict || c.verified) : null,
          ),
        ),
      ),
    ),
  );
}

/** Ratchet worlds: tests passing after every accepted commit, oldest first (none when no commit has a score). */
function scoreChart(commits) {
  const scored = commits
    .filter((c) => c.score !== null && c.score !== undefined)
    .map((c) => [Date.parse(c.date), c.score])
    .reverse();
  if (scored.length === 0) return null;
  const xs = scored.map(([x]) => x);
  const ys = scored.map(([, y]) => y);
  const min = Math.min(...xs);
  const max = Math.max(...xs, min + 1000);
  const ticks = timeTicks(min, max);
  return panel(
    'Score over time (tests passing at each accepted commit)',
    xyChart({
      ariaLabel: 'score over time',
      x: { min, max, ticks: ticks.ticks, format: clockFormat(min, max, ticks.step), label: 'time' },
      y: { min: 0, max: Math.max(1, ...ys), label: 'tests passing' },
      lines: [{ points: scored, class: 's-cumulative' }],
      dots: scored.map(([x, y]) => ({ x, y, title: `${y} passing` })),
    }),
  );
}
