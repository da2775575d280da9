// Accepted history: every commit on the accepted branch, newest first, with its evidence.
import { getJson } from '../api.js';
import { fmtTime, h, link, panel, shortSha } from '../dom.js';

export const name = 'history';
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
    panel(
      null,
      h(
        'ol',
        { class: 'timeline' },
        history.commits.map((c) =>
          h(
            'li',
            { class: c.task ? 'accepted' : 'initial', 'data-commit': c.commit },
            h(
              'div',
              { class: 'head' },
              h('span', { class: 'subject' }, c.task ? c.subject : `${c.subject} (the world's first commit)`),
              h('span', { class: 'mono muted' }, shortSha(c.commit)),
            ),
            h(
              'div',
              { class: 'meta' },
              fmtTime(c.date),
              c.task ? [' · task ', h('strong', null, c.task), ` · attempt ${c.attempt ?? '?'}`, ` · agent ${c.agent ?? '?'}`] : null,
              c.episode ? [' · ', link(`#/episodes/${c.episode}`, `episode ${c.episode}`)] : null,
            ),
            c.verified ? h('div', { class: 'gate', title: 'gate summary' }, c.verified) : null,
          ),
        ),
      ),
    ),
  );
}
