// Overview: is the run going, why (not), how far it got, and what it has spent.
import { getJson } from '../api.js';
import { badge, fmtAgo, fmtCost, fmtNumber, fmtTime, h, kv, link, panel, shortSha, table } from '../dom.js';

export const name = 'overview';
export const title = () => 'Overview';

export async function render() {
  const [o, recent, queue] = await Promise.all([getJson('/api/overview'), getJson('/api/history?limit=5'), getJson('/api/integration')]);
  const t = o.tasks;
  const share = (n) => `${t.total === 0 ? 0 : (n / t.total) * 100}%`;
  return h(
    'div',
    null,
    h('div', { class: 'page-head' }, h('h1', null, o.world.name), h('p', { class: 'muted' }, o.world.outcome)),
    h('div', { class: 'banner', 'data-run-state': o.run.state }, badge(o.run.state), h('span', { class: 'why' }, o.run.why)),
    h(
      'div',
      { class: 'grid' },
      panel(
        'Tasks',
        h('div', { class: 'stat' }, `${t.done}`, h('small', null, ` of ${t.total} done`)),
        // The bar is progress and nothing else: its fill is the done share. Running and blocked are
        // counted beside it, since a task running or blocked is no nearer to done.
        h(
          'div',
          {
            class: 'bar',
            role: 'progressbar',
            'data-progress': 'tasks',
            'aria-label': 'tasks done',
            'aria-valuemin': 0,
            'aria-valuemax': t.total,
            'aria-valuenow': t.done,
            title: `${t.done} of ${t.total} tasks done`,
          },
          h('span', { class: 'done', 'data-w': share(t.done) }),
        ),
        h(
          'div',
          { class: 'counts' },
          h('span', null, badge('running'), ` ${t.running}`),
          h('span', null, badge('pending'), ` ${t.pending}`),
          h('span', null, badge('blocked'), ` ${t.blocked}`),
          t.queuedForRetry ? h('span', null, badge('queued', 'queued for retry'), ` ${t.queuedForRetry}`) : null,
        ),
      ),
      panel(
        'Episodes',
        h('div', { class: 'stat' }, `${o.episodes.total}`, h('small', null, ' episodes')),
        h(
          'div',
          { class: 'counts' },
          ['accepted', 'rejected', 'failed', 'abandoned', 'outrun', 'running'].map((k) =>
            h('span', null, link(`#/episodes?outcome=${k}`, badge(k)), ` ${o.episodes[k]}`),
          ),
        ),
      ),
      panel(
        'Budgets',
        o.budgets.length === 0
          ? h('p', { class: 'muted' }, 'No budget set (goal.stop in world.yaml).')
          : o.budgets.map((b) => {
              const fraction = Math.min(1, b.used / b.limit);
              return h(
                'div',
                { 'data-budget': b.name },
                h(
                  'div',
                  null,
                  h('strong', null, b.name),
                  ` ${fmtNumber(b.used, 2)} of ${fmtNumber(b.limit, 2)} ${b.unit}`,
                  // The same figures as genesis budget: what world.yaml sets and what lifts added.
                  b.lifted > 0 ? h('span', { class: 'muted' }, ` (world.yaml ${fmtNumber(b.set, 2)}, lifted ${fmtNumber(b.lifted, 2)})`) : null,
                ),
                // Spending, not progress: grey while there is room, amber from four fifths, red when spent.
                h(
                  'div',
                  { class: `meter${fraction >= 1 ? ' full' : fraction >= 0.8 ? ' near' : ''}`, title: `${fmtNumber(fraction * 100, 0)}% of this budget used` },
                  h('span', { 'data-w': `${fraction * 100}%` }),
                ),
              );
            }),
        kv([
          ['cost', fmtCost(o.usage.costUsd)],
          ['tokens', o.usage.inputTokens === null ? '–' : `${fmtNumber(o.usage.inputTokens, 0)} in · ${fmtNumber(o.usage.outputTokens, 0)} out`],
        ]),
      ),
    ),
    h(
      'div',
      { class: 'two' },
      panel(
        'Running now',
        table(
          ['Episode', 'Task', 'Attempt', 'Worker', 'Started'],
          o.running.map((r) => [
            link(`#/episodes/${r.id}`, r.id, { class: 'mono' }),
            r.task,
            r.attempt,
            h('span', { class: 'worker' }, `${r.worker} `, badge(r.liveness)),
            fmtAgo(r.startedAt),
          ]),
          'No episode is running.',
        ),
      ),
      panel(
        'Recently accepted',
        table(
          ['Commit', 'Task', 'When'],
          recent.commits
            .filter((c) => c.task)
            .map((c) => [c.episode ? link(`#/episodes/${c.episode}`, shortSha(c.commit), { class: 'mono' }) : shortSha(c.commit), c.task, fmtTime(c.date)]),
          'Nothing accepted yet.',
        ),
        h('p', { class: 'note' }, link('#/history', 'Whole history →')),
      ),
    ),
    integrationPanel(queue),
    o.cluster ? workersPanel(o.cluster) : null,
    panel(
      'World',
      kv([
        ['path', h('span', { class: 'mono' }, o.world.path)],
        ['branch', `${o.world.branch} at ${shortSha(o.world.head)}`],
        ['evidence', o.world.evidence ? h('code', null, o.world.evidence) : 'none (done when every task is)'],
        ['sandbox', o.world.sandbox],
        ['agent', o.world.agent],
        ['parallelism', o.world.parallelism],
        ['attempts per task', o.world.maxAttempts],
      ]),
    ),
  );
}

const STAGE_WORDS = {
  waiting: 'waits to be built on the change ahead',
  building: 'being built',
  built: 'built, waits for a verification slot',
  gating: "its episode's own gate runs on this commit",
  verifying: 'being verified',
  verified: 'verified, lands when those ahead have',
  landing: 'landing',
};

// The integration queue: changes that passed their own gate, each verified on top of those ahead.
function integrationPanel(q) {
  const onTopOf = (e) => {
    if (e.onTopOf.kind === 'nothing-yet') return '–';
    const on = e.onTopOf.kind === 'head' ? 'the accepted head' : h('span', null, 'change ', link(`#/episodes/${e.onTopOf.id}`, e.onTopOf.task));
    return h('span', null, on, ' ', h('span', { class: 'mono muted' }, shortSha(e.onto)));
  };
  const counts = Object.entries(q.counts)
    .filter(([, n]) => n > 0)
    .map(([stage, n]) => `${n} ${stage}`)
    .join(' · ');
  let about = 'No run is going.';
  if (q.current) about = `As of ${fmtTime(q.at)}, from ${q.run}${counts ? `: ${counts}` : ''}.`;
  else if (q.entries.length > 0) about = `No run is going; these changes are as the last run left them at ${fmtTime(q.at)} (the next run takes them up again).`;
  const hold = q.hold
    ? h(
        'p',
        { class: 'note', 'data-world-hold': String(q.hold.untilMs) },
        `Held until ${fmtTime(new Date(q.hold.untilMs).toISOString())}; the run resumes by itself then: ${q.hold.message}`,
      )
    : null;
  // A wait of more than a few seconds is named with how long so far, as genesis run's output names it.
  const long = (q.waits ?? []).filter((w) => w.ms >= 5000);
  const waits = long.length
    ? h(
        'ul',
        { class: 'note', 'data-waits': String(long.length) },
        ...long.map((w) => h('li', { 'data-wait': w.task }, `${w.task} waits for ${w.what} (${Math.round(w.ms / 1000)}s so far)`)),
      )
    : null;
  return panel(
    `Integration queue (${q.entries.length})`,
    hold,
    waits,
    h('p', { class: 'note', 'data-queue-current': String(q.current) }, about),
    table(
      [{ label: '#', class: 'num' }, 'Task', 'Episode', 'Stage', 'On top of', 'Speculative commit'],
      q.entries.map((e) => [
        e.position,
        e.task,
        link(`#/episodes/${e.id}`, e.id, { class: 'mono' }),
        h('span', { 'data-stage': e.stage }, badge(e.stage), ` ${STAGE_WORDS[e.stage] ?? ''}`),
        onTopOf(e),
        h('span', { class: 'mono' }, shortSha(e.commit)),
      ]),
      'Nothing waits to land.',
    ),
  );
}

// Only with `genesis serve --redis`: the workers whose heartbeat the queue's registry holds.
function workersPanel(cluster) {
  return panel(
    `Workers alive (${cluster.workers.length})`,
    cluster.error ? h('p', { class: 'error-box' }, `Redis does not answer: ${cluster.error}`) : null,
    table(
      ['Worker', 'Host', 'PID', { label: 'Slots', class: 'num' }, 'Running', 'Last heartbeat'],
      cluster.workers.map((w) => [
        h('span', { class: 'mono' }, w.id),
        w.host,
        w.pid,
        w.concurrency,
        w.episodes.length ? w.episodes.map((id) => link(`#/episodes/${id}`, id, { class: 'mono' })) : 'idle',
        fmtAgo(new Date(w.lastSeen).toISOString()),
      ]),
      cluster.error ? '' : 'No worker is alive: start one with genesis worker --redis <url>.',
    ),
  );
}
