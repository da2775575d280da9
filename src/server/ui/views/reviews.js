// Reviews: changes that passed their gate and wait for a person, with their diff and gate log, to approve or reject.
import { postJson, getJson } from '../api.js';
import { errorBox, fmtAgo, h, link, shortSha } from '../dom.js';

export const name = 'reviews';
export const title = () => 'Reviews';

export async function render({ refresh }) {
  const { reviews } = await getJson('/api/reviews');
  if (reviews.length === 0) return h('div', null, h('h2', null, 'Reviews'), h('p', { class: 'muted' }, 'No change waits for review.'));
  return h(
    'div',
    null,
    h('h2', null, `Reviews (${reviews.length})`),
    reviews.map((r) => reviewCard(r, refresh)),
  );
}

function reviewCard(r, refresh) {
  return h(
    'section',
    { class: 'panel review', 'data-episode': r.id },
    h(
      'h3',
      null,
      `${r.task} · attempt ${r.attempt}`,
      ' ',
      h('span', { class: 'muted small' }, `${r.agent} · candidate ${shortSha(r.candidate)} on ${shortSha(r.base)} · waiting since ${fmtAgo(r.since)}`),
    ),
    h('div', { class: 'small' }, link(`#/episodes/${r.id}`, `episode ${r.id} →`), r.gate ? ` · gate: ${r.gate}` : null),
    log('Diff', r.diff, true),
    log('Gate log', r.gateLog, false),
    r.decided
      ? h(
          'p',
          { role: 'status' },
          `${r.decided.decision === 'approve' ? 'Approved' : 'Rejected'}${r.decided.by ? ` by ${r.decided.by}` : ''}; a run carries it out at its next step.`,
        )
      : decideForm(r, refresh),
  );
}

function log(label, text, diff) {
  const body = text?.trim() ? text : null;
  return h(
    'details',
    { class: 'log', open: diff && body !== null, 'data-section': label },
    h('summary', null, label, body ? null : h('span', { class: 'muted small' }, ' none recorded')),
    body ? h('pre', { class: diff ? 'text diff' : 'text' }, body) : null,
  );
}

function decideForm(r, refresh) {
  const note = h('input', {
    type: 'text',
    name: 'note',
    placeholder: 'note: why (a rejection note goes into the next prompt)',
    'aria-label': `note for ${r.id}`,
  });
  const status = h('div', { class: 'small', role: 'status' });
  const button = (decision, label) =>
    h(
      'button',
      {
        type: 'button',
        'data-decision': decision,
        onclick: async (event) => {
          event.target.disabled = true;
          try {
            await postJson(`/api/reviews/${encodeURIComponent(r.id)}/${decision}`, { note: note.value || null });
            await refresh();
          } catch (error) {
            status.replaceChildren(errorBox(error));
            event.target.disabled = false;
          }
        },
      },
      label,
    );
  return h('div', null, h('div', { class: 'retry-form' }, note, button('approve', 'Approve'), button('reject', 'Reject')), status);
}
