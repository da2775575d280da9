// Tasks board: every task by state. A blocked task shows why it is blocked and can be retried.
import { postJson, getJson } from '../api.js';
import { badge, errorBox, fmtAgo, h, link, panel, shortSha, spendLine } from '../dom.js';
import { taskGraph } from '../task-graph.js';

export const name = 'tasks';
export const title = () => 'Tasks';

const COLUMNS = [
  ['pending', 'Pending'],
  ['running', 'Running'],
  ['blocked', 'Blocked'],
  ['done', 'Done'],
];

export async function render({ refresh }) {
  const board = await getJson('/api/tasks');
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Tasks'),
      h(
        'p',
        { class: 'muted' },
        `${board.counts.done} of ${board.counts.total} done · a task is blocked after ${board.maxAttempts} failed attempts; Retry gives it ${board.maxAttempts} more.`,
      ),
    ),
    panel('Task graph (an arrow goes from a task to the one that waits for it)', h('div', { class: 'graph-scroll' }, taskGraph(board.tasks))),
    h(
      'div',
      { class: 'board' },
      COLUMNS.map(([state, label]) => {
        const cards = board.tasks.filter((t) => t.state === state);
        return h(
          'section',
          { class: 'column', 'data-column': state },
          h('h2', null, h('span', null, label), h('span', null, String(cards.length))),
          cards.length === 0 ? h('div', { class: 'empty' }, 'none') : cards.map((t) => card(t, board.maxAttempts, refresh)),
        );
      }),
    ),
  );
}

const BLOCKED_BY = {
  attempts: 'its attempts are used',
  repeat: 'it failed the same way twice in a row',
  'broken-base': 'the accepted head fails its own gate (fix it with genesis amend)',
};

function card(t, maxAttempts, refresh) {
  const queued = t.queuedForRetry !== null;
  return h(
    'article',
    { class: `card ${queued ? 'queued' : t.state}`, 'data-task': t.id },
    h('div', null, h('span', { class: 'id' }, t.id), ' ', queued ? badge('queued', 'queued for retry') : null),
    h('div', { class: 'title' }, t.title),
    t.state === 'running' && t.running
      ? h(
          'div',
          { class: 'line' },
          `attempt ${t.running.attempt} since ${fmtAgo(t.running.startedAt)} on `,
          h('span', { class: 'worker mono', title: t.running.worker }, t.running.worker),
          ' · ',
          link(`#/episodes/${t.running.episode}`, 'episode'),
        )
      : null,
    t.state === 'done' && t.accepted
      ? h(
          'div',
          { class: 'line' },
          'accepted as ',
          h('span', { class: 'mono' }, shortSha(t.accepted.commit)),
          t.accepted.attempt ? ` on attempt ${t.accepted.attempt}` : '',
          t.accepted.episode ? [' · ', link(`#/episodes/${t.accepted.episode}`, 'episode')] : null,
        )
      : null,
    t.state !== 'done' && t.failures > 0
      ? h(
          'div',
          { class: 'line' },
          `${t.failuresSinceRetry} of ${maxAttempts} failed attempts allowed${t.failures !== t.failuresSinceRetry ? ` (${t.failures} failed in all)` : ''}`,
        )
      : null,
    // Attempts and episodes as genesis status counts them: an abandoned or outrun episode is no attempt.
    t.episodes > 0
      ? h(
          'div',
          { class: 'line', 'data-attempts': t.attempts },
          `${t.attempts} attempt${t.attempts === 1 ? '' : 's'}`,
          t.episodes !== t.attempts ? ` (${t.episodes} episodes)` : '',
        )
      : null,
    t.spend ? h('div', { class: 'line spend', title: 'what its episodes spent' }, spendLine(t.spend)) : null,
    t.waitingOn ? h('div', { class: 'line' }, 'waiting on blocked task ', h('strong', null, t.waitingOn)) : null,
    t.dependsOn.length && t.state === 'pending' && !t.waitingOn ? h('div', { class: 'line' }, `after ${t.dependsOn.join(', ')}`) : null,
    queued ? h('div', { class: 'line' }, `retried ${fmtAgo(t.queuedForRetry.at)}${t.queuedForRetry.note ? `: “${t.queuedForRetry.note}”` : ''}`) : null,
    t.blockedBy ? h('div', { class: 'line' }, `blocked: ${BLOCKED_BY[t.blockedBy] ?? t.blockedBy}`) : null,
    t.state === 'blocked' && t.lastFailure ? lastFailure(t.lastFailure) : null,
    t.reopened ? h('div', { class: 'line' }, `reopened ${fmtAgo(t.reopened.date)}${t.reopened.reason ? `: “${t.reopened.reason}”` : ''}`) : null,
    t.state === 'blocked' ? retryForm(t, refresh) : null,
    t.state === 'done' ? reopenForm(t, refresh) : null,
  );
}

function lastFailure(f) {
  return h(
    'div',
    { class: 'why' },
    h('strong', null, f.reason ?? f.outcome),
    f.message ? `: ${f.message}` : '',
    f.signature ? h('div', { class: 'sig', title: 'failure signature' }, f.signature) : null,
    h('div', { class: 'small' }, link(`#/episodes/${f.episode}`, `last attempt (${f.attempt}) →`)),
  );
}

// A done task whose acceptance changed is done again: the reason is required, it goes into the next prompt.
function reopenForm(t, refresh) {
  const reason = h('input', {
    type: 'text',
    name: 'reason',
    required: true,
    placeholder: 'reason: what changed?',
    'aria-label': `reason for reopening ${t.id}`,
  });
  const button = h('button', { type: 'submit' }, 'Reopen');
  const status = h('div', { class: 'small', role: 'status' });
  const form = h(
    'form',
    {
      class: 'reopen-form',
      onsubmit: async (event) => {
        event.preventDefault();
        button.disabled = true;
        button.textContent = 'Reopening…';
        try {
          await postJson(`/api/tasks/${encodeURIComponent(t.id)}/reopen`, { reason: reason.value });
          reason.blur();
          await refresh();
        } catch (error) {
          status.replaceChildren(errorBox(error));
          button.disabled = false;
          button.textContent = 'Reopen';
        }
      },
    },
    reason,
    button,
  );
  return h('div', null, form, status);
}

function retryForm(t, refresh) {
  const note = h('input', { type: 'text', name: 'note', placeholder: 'note (optional): what changed?', 'aria-label': `note for retrying ${t.id}` });
  const button = h('button', { type: 'submit' }, 'Retry');
  const status = h('div', { class: 'small', role: 'status' });
  const form = h(
    'form',
    {
      class: 'retry-form',
      onsubmit: async (event) => {
        event.preventDefault();
        button.disabled = true;
        button.textContent = 'Retrying…';
        try {
          await postJson(`/api/tasks/${encodeURIComponent(t.id)}/retry`, { note: note.value || null });
          note.blur();
          await refresh();
        } catch (error) {
          status.replaceChildren(errorBox(error));
          button.disabled = false;
          button.textContent = 'Retry';
        }
      },
    },
    note,
    button,
  );
  return h('div', null, form, status);
}
