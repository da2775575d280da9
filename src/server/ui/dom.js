// DOM and formatting helpers. Every piece of text from the world goes in as a text node, never as
// HTML: prompts, logs and diffs are written by agents.

/** Creates an element: h('a', { href: '#/', class: 'x', onclick: fn }, 'text', child, [more]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children, flattening arrays and skipping null, undefined and false. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export const shortSha = (sha) => (sha ? sha.slice(0, 12) : '–');

/** 950 ms, 12.3 s, 4 min 5 s, 3 h 2 min, 2 d 4 h. */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr} h ${m % 60} min`;
  return `${Math.floor(hr / 24)} d ${hr % 24} h`;
}

/** A local time, to the second: 2026-11-29 14:54:33. */
export function fmtTime(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "3 min ago" style, for things that are still moving. */
export function fmtAgo(iso) {
  if (!iso) return '–';
  return `${fmtDuration(Math.max(0, Date.now() - Date.parse(iso)))} ago`;
}

/** A rate as a percentage; the API sends "Infinity" for unbounded horizons and null for unknowns. */
export function pct(x, digits = 1) {
  return x === null || x === undefined ? '–' : `${(x * 100).toFixed(digits)}%`;
}

export function fmtNumber(x, digits = 1) {
  if (x === 'Infinity') return '∞';
  if (x === null || x === undefined) return '–';
  return Number(x).toLocaleString(undefined, { maximumFractionDigits: digits });
}

export function fmtCost(usd) {
  return usd === null || usd === undefined ? '–' : `$${Number(usd).toFixed(usd < 1 ? 4 : 2)}`;
}

/**
 * What episodes spent, in one line: "3 episodes · 12,400 tokens · $0.0400 · agent 2 min 3 s · gate 12.0 s · landed after 5 min 2 s".
 * A sum that misses some episodes' reports is a lower bound ("≥"); one nobody reported is left out.
 */
export function spendLine(s) {
  const atLeast = (unknown) => (unknown > 0 ? '≥' : '');
  return [
    `${s.episodes} episode${s.episodes === 1 ? '' : 's'}`,
    s.tokens === null ? null : `${atLeast(s.episodesWithoutTokens)}${fmtNumber(s.tokens, 0)} tokens`,
    s.costUsd === null ? null : `${atLeast(s.episodesWithoutCost)}${fmtCost(s.costUsd)}`,
    `agent ${fmtDuration(s.agentMs)}`,
    `gate ${fmtDuration(s.gateMs)}`,
    s.toLandingMs === null || s.toLandingMs === undefined ? null : `landed after ${fmtDuration(s.toLandingMs)}`,
  ]
    .filter(Boolean)
    .join(' · ');
}

/** A coloured pill for an outcome or state; the class is b-<value>. */
export function badge(value, label = value) {
  return h('span', { class: `badge b-${String(value).replace(/[^a-z-]/g, '')}` }, label);
}

export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

/** A definition list from [label, value] pairs; null values are skipped. */
export function kv(pairs) {
  return h(
    'dl',
    { class: 'kv' },
    pairs.filter(([, v]) => v !== null && v !== undefined).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
  );
}

/** A table with a header row; rows are arrays of cells (text or nodes), or { cells, attrs }. */
export function table(headers, rows, empty = 'Nothing yet.') {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  const head = h(
    'tr',
    null,
    headers.map((col) => (typeof col === 'string' ? h('th', null, col) : h('th', { class: col.class }, col.label))),
  );
  return h(
    'table',
    null,
    h('thead', null, head),
    h(
      'tbody',
      null,
      rows.map((row) => {
        const cells = Array.isArray(row) ? row : row.cells;
        return h(
          'tr',
          Array.isArray(row) ? null : row.attrs,
          cells.map((cell, i) => h('td', { class: typeof headers[i] === 'string' ? null : headers[i].class }, cell)),
        );
      }),
    ),
  );
}

export function panel(title, ...children) {
  return h('section', { class: 'panel' }, title ? h('h2', null, title) : null, children);
}

export function errorBox(error) {
  return h(
    'div',
    { class: 'error-box' },
    h('strong', null, error.message ?? String(error)),
    error.hint ? h('div', { class: 'small' }, `What to do: ${error.hint}`) : null,
  );
}
