// The task graph: every task as a box in the column of its depth (how many dependencies deep it
// sits), an arrow from each dependency to the task that waits for it, coloured by state, with the
// attempts it took. Plain SVG, as the charts are.

const NS = 'http://www.w3.org/2000/svg';
const W = 168;
const H = 50;
const GAP_X = 56;
const GAP_Y = 16;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs ?? {})) if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/** Depth of each task: 0 without dependencies, else one more than its deepest dependency (a cycle counts once). */
function depths(tasks) {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const depth = new Map();
  const visit = (id, seen) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id) || !byId.has(id)) return -1;
    seen.add(id);
    const d = 1 + Math.max(-1, ...byId.get(id).dependsOn.map((dep) => visit(dep, seen)));
    depth.set(id, d);
    return d;
  };
  for (const t of tasks) visit(t.id, new Set());
  return depth;
}

/** Attempts a task took or takes: the board's one count, the same as genesis status shows. */
export function attemptsOf(t) {
  return t.attempts;
}

export function taskGraph(tasks) {
  const depth = depths(tasks);
  const columns = [];
  for (const t of tasks) {
    const d = depth.get(t.id);
    if (!columns[d]) columns[d] = [];
    columns[d].push(t);
  }
  const at = new Map();
  // Each column in the order of what its tasks wait for, so that arrows cross as little as they can.
  const rowOf = (t) => {
    const ys = t.dependsOn.filter((d) => at.has(d)).map((d) => at.get(d).y);
    return ys.length === 0 ? Number.POSITIVE_INFINITY : ys.reduce((a, b) => a + b, 0) / ys.length;
  };
  columns.forEach((column, x) => {
    const ordered = x === 0 ? column : [...column].sort((p, q) => rowOf(p) - rowOf(q));
    for (const [y, t] of ordered.entries()) at.set(t.id, { x: x * (W + GAP_X), y: y * (H + GAP_Y) });
  });
  const width = columns.length * (W + GAP_X) - GAP_X;
  const height = Math.max(...columns.map((c) => c.length)) * (H + GAP_Y) - GAP_Y;
  const edges = tasks.flatMap((t) =>
    t.dependsOn
      .filter((dep) => at.has(dep))
      .map((dep) => {
        const from = at.get(dep);
        const to = at.get(t.id);
        const [x1, y1, x2, y2] = [from.x + W, from.y + H / 2, to.x, to.y + H / 2];
        const mid = (x1 + x2) / 2;
        return s('path', {
          class: 'edge',
          d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 4},${y2}`,
          'marker-end': 'url(#arrow)',
          'data-edge': `${dep}->${t.id}`,
        });
      }),
  );
  const nodes = tasks.map((t) => {
    const { x, y } = at.get(t.id);
    const tried = attemptsOf(t);
    const state = t.queuedForRetry ? 'queued' : t.state;
    return s(
      'g',
      { class: `node ${state}`, transform: `translate(${x},${y})`, 'data-task': t.id, 'data-state': t.state },
      s('title', null, `${t.id}: ${t.title}`),
      s('rect', { width: W, height: H, rx: 6 }),
      s('text', { x: 10, y: 20, class: 'id' }, t.id),
      s('text', { x: 10, y: 38, class: 'detail' }, `${state} · ${tried} attempt${tried === 1 ? '' : 's'}`),
    );
  });
  return s(
    'svg',
    { class: 'task-graph', viewBox: `-2 -2 ${width + 4} ${height + 4}`, width: width + 4, height: height + 4, role: 'img', 'aria-label': 'task graph' },
    s(
      'defs',
      null,
      s('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 7, refY: 4, markerWidth: 8, markerHeight: 8, orient: 'auto' }, s('path', { d: 'M0,0 L8,4 L0,8 z' })),
    ),
    edges,
    nodes,
  );
}
