// The episode timeline: a row per worker slot of each machine (across restarts of genesis run), each episode a bar split into its phases (agent,
// gate, waiting, integration), on one time axis. Plain SVG, as the charts and the task graph are.

const NS = 'http://www.w3.org/2000/svg';
const LABEL = 170;
const ROW = 24;
const BAR = 16;
const AXIS = 22;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs ?? {})) if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

// A label must end before the bars start (LABEL px of 12 px monospace): a cloud host's long name
// keeps its start, which tells machines apart, and shows whole on hover.
const shortHost = (host) => (host.length > 18 ? `${host.slice(0, 17)}…` : host);

const seconds = (ms) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);

/** `width`: the pixels the picture may take; the time axis gets what the labels leave, at 12 px text whatever the width. */
export function episodeTimeline(timeline, width = 1074) {
  const PLOT = Math.max(400, width - LABEL - 4);
  const from = timeline.fromMs ?? 0;
  const span = Math.max(1, (timeline.toMs ?? 0) - from);
  const x = (ms) => LABEL + ((ms - from) / span) * PLOT;
  const rows = timeline.slots.map((slot, i) =>
    s(
      'g',
      { class: 'slot', transform: `translate(0,${AXIS + i * ROW})`, 'data-host': slot.host, 'data-slot': slot.slot },
      s('g', null, s('title', null, `${slot.host} #${slot.slot}`), s('text', { x: 0, y: BAR - 3, class: 'label' }, `${shortHost(slot.host)} #${slot.slot}`)),
      slot.episodes.map((e) =>
        s(
          'g',
          { class: `episode ${e.outcome}`, 'data-episode': e.id, 'data-task': e.task, 'data-outcome': e.outcome, 'data-worker': e.worker },
          s(
            'title',
            null,
            `${e.task} attempt ${e.attempt} (${e.outcome}) on ${e.worker}: ${e.bars.map((b) => `${b.phase} ${seconds(b.endMs - b.startMs)}`).join(', ')}`,
          ),
          e.bars.map((b) =>
            s('rect', {
              class: `phase p-${b.phase}`,
              'data-phase': b.phase,
              'data-ms': b.endMs - b.startMs,
              x: x(b.startMs),
              y: 0,
              // A bar of a few milliseconds still shows as a sliver.
              width: Math.max(1, x(b.endMs) - x(b.startMs)),
              height: BAR,
            }),
          ),
        ),
      ),
    ),
  );
  const height = AXIS + timeline.slots.length * ROW;
  const axis = s(
    'g',
    { class: 'axis' },
    s('text', { x: LABEL, y: 12 }, timeline.fromMs === null ? '' : new Date(from).toLocaleTimeString()),
    s(
      'text',
      { x: LABEL + PLOT, y: 12, 'text-anchor': 'end' },
      timeline.toMs === null ? '' : `${new Date(timeline.toMs).toLocaleTimeString()} (${seconds(span)})`,
    ),
  );
  return s(
    'svg',
    { class: 'episode-timeline', viewBox: `0 0 ${LABEL + PLOT + 4} ${height}`, width: LABEL + PLOT + 4, height, role: 'img', 'aria-label': 'episode timeline' },
    axis,
    rows,
  );
}

/** The colour key under the timeline. */
export const TIMELINE_PHASES = ['agent', 'gate', 'waiting', 'integration'];
