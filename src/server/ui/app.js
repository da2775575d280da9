// The dashboard's shell: a hash router over the views, and live updates from /api/events.
import { getJson } from './api.js';
import { errorBox, h } from './dom.js';
import * as episode from './views/episode.js';
import * as episodes from './views/episodes.js';
import * as history from './views/history.js';
import * as overview from './views/overview.js';
import * as reliability from './views/reliability.js';
import * as reviews from './views/reviews.js';
import * as tasks from './views/tasks.js';

const ROUTES = [
  { pattern: /^\/$/, view: overview, nav: 'overview' },
  { pattern: /^\/history$/, view: history, nav: 'history' },
  { pattern: /^\/episodes$/, view: episodes, nav: 'episodes' },
  { pattern: /^\/episodes\/([^/]+)$/, view: episode, nav: 'episodes' },
  { pattern: /^\/tasks$/, view: tasks, nav: 'tasks' },
  { pattern: /^\/reviews$/, view: reviews, nav: 'reviews' },
  { pattern: /^\/reliability$/, view: reliability, nav: 'reliability' },
];

const main = document.getElementById('view');
let renderCount = 0;
let refreshPending = false;

function currentRoute() {
  const raw = decodeURIComponent(location.hash.replace(/^#/, '')) || '/';
  const [path, query = ''] = raw.split('?');
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match) return { route, match, params: new URLSearchParams(query) };
  }
  return null;
}

/** Navigates within the dashboard, e.g. to change the episodes filters. */
export function navigate(path, params) {
  const query = params && [...params].length > 0 ? `?${params}` : '';
  location.hash = `#${path}${query}`;
}

/** Renders the current page; `quiet` keeps the old content on screen until the new one is ready. */
async function render({ quiet = false } = {}) {
  const mine = ++renderCount;
  const found = currentRoute();
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', found?.route.nav === a.dataset.nav);
  if (!found) {
    main.replaceChildren(h('p', null, 'No such page. ', h('a', { href: '#/' }, 'Back to the overview')));
    return;
  }
  if (!quiet) main.dataset.state = 'loading';
  try {
    const node = await found.route.view.render({ match: found.match, params: found.params, refresh: () => render({ quiet: true }), navigate });
    if (mine !== renderCount) return; // a newer render started meanwhile
    main.replaceChildren(node);
    // CSP forbids inline style attributes, so bar widths travel as data-w and are set here.
    for (const el of main.querySelectorAll('[data-w]')) el.style.width = el.dataset.w;
    main.dataset.state = 'ready';
    main.dataset.view = found.route.view.name;
    document.title = `${found.route.view.title(found)} · Genesis`;
  } catch (error) {
    if (mine !== renderCount) return;
    main.replaceChildren(errorBox(error));
    main.dataset.state = 'error';
  }
}

// A live update must not wipe what someone is typing (a retry note): wait until they leave it.
function userIsTyping() {
  const active = document.activeElement;
  return active && main.contains(active) && (active.tagName === 'INPUT' || active.tagName === 'TEXTAREA' || active.tagName === 'SELECT');
}

function liveRefresh() {
  if (userIsTyping()) {
    refreshPending = true;
    return;
  }
  refreshPending = false;
  void render({ quiet: true });
}

main.addEventListener('focusout', () => {
  if (refreshPending) setTimeout(liveRefresh, 0);
});

function connectLive() {
  const badge = document.getElementById('live');
  const events = new EventSource('/api/events');
  events.addEventListener('hello', () => {
    badge.textContent = 'live';
    badge.classList.add('on');
  });
  events.addEventListener('change', liveRefresh);
  // EventSource reconnects by itself; until it does, poll so the page does not go stale.
  let poll = null;
  events.addEventListener('error', () => {
    badge.textContent = 'reconnecting…';
    badge.classList.remove('on');
    poll ??= setInterval(liveRefresh, 5000);
  });
  events.addEventListener('open', () => {
    if (poll) clearInterval(poll);
    poll = null;
  });
}

async function showWorldName() {
  try {
    const health = await getJson('/api/health');
    document.getElementById('world-name').textContent = health.name;
    // The BullMQ board is there only when the server runs with --redis.
    if (health.queueBoard) {
      const queues = document.getElementById('queues-link');
      queues.href = health.queueBoard;
      queues.hidden = false;
    }
  } catch {
    // the page itself shows the error
  }
}

window.addEventListener('hashchange', () => void render());
void showWorldName();
void render();
// `?live=0` draws the page once and keeps no request open: a headless browser's virtual time
// (chromium --virtual-time-budget, for a screenshot) waits for every open request, and the live
// stream never ends.
if (new URLSearchParams(location.search).get('live') === '0') document.getElementById('live').textContent = 'not live (?live=0)';
else connectLive();
