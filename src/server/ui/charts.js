// A small SVG chart: lines, and points with interval whiskers, on linear axes. Enough for the
// reliability page without a charting library.

const NS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs ?? {})) if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/** About `count` round tick values between min and max. */
export function niceTicks(min, max, count = 6) {
  const span = max - min || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? raw;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

const SECOND = 1000;
const TIME_STEPS = [1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400].map((s) => s * SECOND);

/**
 * Labels for time ticks `step` apart between min and max, in local time, as precise as the step
 * needs and no two alike: seconds under a minute's step, the date once the span passes a day
 * (13:00 on two days would read as one time).
 */
export function clockFormat(min, max, step) {
  const pad = (n) => String(n).padStart(2, '0');
  return (ms) => {
    const d = new Date(ms);
    const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    if (step < 60 * SECOND) return `${time}:${pad(d.getSeconds())}`;
    if (step >= 86_400 * SECOND) return day;
    return max - min < 86_400 * SECOND ? time : `${day} ${time}`;
  };
}

/** About `count` tick times between two epoch milliseconds, on round clock steps. */
export function timeTicks(min, max, count = 6) {
  const step = TIME_STEPS.find((st) => (max - min) / st <= count) ?? TIME_STEPS.at(-1);
  // Round in local time, so 15-minute ticks fall on :00, :15, … wherever the reader is.
  const offset = new Date(min).getTimezoneOffset() * 60 * SECOND;
  const ticks = [];
  for (let t = Math.ceil((min - offset) / step) * step + offset; t <= max; t += step) ticks.push(t);
  return { ticks, step };
}

/**
 * Draws an x/y chart.
 * @param {object} o
 * @param {{min:number,max:number,ticks?:number[],format?:(v:number)=>string,label?:string}} o.x
 * @param {{min:number,max:number,ticks?:number[],format?:(v:number)=>string,label?:string}} o.y
 * @param {Array<{points:Array<[number,number]>,class:string}>} [o.lines]
 * @param {Array<{x:number,y:number,low?:number,high?:number,title?:string,class?:string}>} [o.dots]
 */
export function xyChart(o) {
  const width = o.width ?? 640;
  const height = o.height ?? 280;
  const m = { left: 52, right: 30, top: 12, bottom: 42 };
  const iw = width - m.left - m.right;
  const ih = height - m.top - m.bottom;
  const sx = (v) => m.left + ((v - o.x.min) / (o.x.max - o.x.min || 1)) * iw;
  const sy = (v) => m.top + ih - ((v - o.y.min) / (o.y.max - o.y.min || 1)) * ih;
  const fx = o.x.format ?? String;
  const fy = o.y.format ?? String;
  const xTicks = o.x.ticks ?? niceTicks(o.x.min, o.x.max);
  const yTicks = o.y.ticks ?? niceTicks(o.y.min, o.y.max, 4);

  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': o.ariaLabel ?? 'chart' });
  svg.append(
    s(
      'g',
      { class: 'grid' },
      yTicks.map((t) => s('line', { x1: m.left, x2: m.left + iw, y1: sy(t), y2: sy(t) })),
    ),
    s(
      'g',
      { class: 'axis' },
      s('line', { x1: m.left, x2: m.left + iw, y1: m.top + ih, y2: m.top + ih }),
      s('line', { x1: m.left, x2: m.left, y1: m.top, y2: m.top + ih }),
      xTicks.map((t) => [
        s('line', { x1: sx(t), x2: sx(t), y1: m.top + ih, y2: m.top + ih + 4 }),
        s('text', { x: sx(t), y: m.top + ih + 16, 'text-anchor': 'middle' }, fx(t)),
      ]),
      yTicks.map((t) => s('text', { x: m.left - 6, y: sy(t) + 4, 'text-anchor': 'end' }, fy(t))),
      o.x.label ? s('text', { x: m.left + iw / 2, y: height - 6, 'text-anchor': 'middle' }, o.x.label) : null,
      o.y.label ? s('text', { x: 12, y: m.top + ih / 2, 'text-anchor': 'middle', transform: `rotate(-90 12 ${m.top + ih / 2})` }, o.y.label) : null,
    ),
  );
  for (const line of o.lines ?? []) {
    if (line.points.length === 0) continue;
    const d = line.points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    svg.append(s('path', { d, class: line.class }));
  }
  for (const dot of o.dots ?? []) {
    const g = s('g', { class: 'dot' });
    if (dot.low !== undefined && dot.high !== undefined) {
      const x = sx(dot.x);
      g.append(
        s('line', { class: 'whisker', x1: x, x2: x, y1: sy(dot.low), y2: sy(dot.high) }),
        s('line', { class: 'whisker', x1: x - 4, x2: x + 4, y1: sy(dot.low), y2: sy(dot.low) }),
        s('line', { class: 'whisker', x1: x - 4, x2: x + 4, y1: sy(dot.high), y2: sy(dot.high) }),
      );
    }
    g.append(s('circle', { class: `pt ${dot.class ?? ''}`, cx: sx(dot.x), cy: sy(dot.y), r: 4 }, dot.title ? s('title', null, dot.title) : null));
    svg.append(g);
  }
  return svg;
}
