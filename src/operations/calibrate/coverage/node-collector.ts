/**
 * Run inside the gate after the tests, by Node: the lines of each file of the work dir (outside
 * node_modules) that the tests executed, as `{ path: [[from, to], …] }` on standard output.
 *
 * Four sources, each in the file's own positions:
 * - nyc's raw report (`.nyc_output`): its statement map is in the file's positions, while V8 saw
 *   nyc's instrumented copy, whose offsets mean nothing in the file; a statement that ran marks
 *   the line it starts on, and V8's view of that file is ignored.
 * - V8 coverage of a script Node holds a source map for (a compiler's output, a TypeScript loader's
 *   transform): each original line is placed by its first mapped column, executed when the
 *   generated code there ran. Type-only lines have no mapping, so they are never marked.
 * - V8 coverage of a runner's transform evaluated by `vm` under the file's name (vitest, jest), placed
 *   the same way through the inline source map of the code the preload saved (node-preload.ts,
 *   its folder the second argument): V8 names the file, but its positions are the transform's.
 *   Code saved with no map is placed only where it holds the file's own text once (a runner's
 *   module wrapper around a file it did not transform), and otherwise left out.
 * - V8 coverage of plain JavaScript (also what c8 writes, into the same NODE_V8_COVERAGE): a line is
 *   executed when its first character ran. Block ranges are painted outer first, so a block that
 *   never ran leaves its lines unmarked even inside a function that did. A file transformed
 *   without a source map the collector can read (TypeScript under a runner that keeps none) is left
 *   out: offsets in its transform cannot be placed on it.
 */
export const NODE_COLLECTOR = String.raw`
const fs = require('fs'), path = require('path'), url = require('url');
const root = process.cwd(), files = {}, byNyc = new Set();
const list = (dir) => { try { return fs.readdirSync(dir); } catch { return []; } };
const readJson = (file) => { try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return null; } };
const relative = (file) => {
  const rel = path.relative(root, file);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).includes('node_modules') ? null : rel;
};
const lines = (rel) => files[rel] || (files[rel] = new Set());
const painted = (ranges, length) => {
  const count = new Uint8Array(length);
  const sorted = [...ranges].sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  for (const r of sorted) count.fill(r.count > 0 ? 1 : 0, r.startOffset, Math.min(r.endOffset, length));
  return count;
};
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const segments = (mappings) => {
  const out = [], state = [0, 0, 0, 0, 0];
  let line = 0;
  for (const group of mappings.split(';')) {
    state[0] = 0;
    for (const text of group.split(',')) {
      if (!text) continue;
      const fields = [];
      let value = 0, shift = 0;
      for (const c of text) {
        const digit = BASE64.indexOf(c);
        value += (digit & 31) << shift;
        if (digit & 32) { shift += 5; continue; }
        fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
        value = 0; shift = 0;
      }
      fields.forEach((f, i) => { state[i] += f; });
      if (fields.length >= 4) out.push({ line, column: state[0], source: state[1], originalLine: state[2], originalColumn: state[3] });
    }
    line += 1;
  }
  return out;
};
// The lines a source map places code on, each marked when the generated code at its first column ran; offsetOf(line, column) is where a generated position is in the script V8 covered.
// False, and nothing marked, when none of the map's sources is a file of the work dir: a package
// shipping its compiled code with maps to sources it left out (no-case's dist/ names src/index.ts).
const fromSourceMap = (base, map, count, offsetOf) => {
  const sources = (map.sources || []).map((s) => s.startsWith('file://') ? url.fileURLToPath(s) : path.resolve(path.dirname(base), map.sourceRoot || '', s))
    .map((s) => (relative(s) && fs.existsSync(s) ? s : null));
  if (!sources.some(Boolean)) return false;
  const first = new Map();
  for (const s of segments(map.mappings || '')) {
    const key = s.source + ':' + s.originalLine, ran = count[offsetOf(s.line, s.column)] > 0;
    const seen = first.get(key);
    if (!seen || s.originalColumn < seen.column) first.set(key, { source: s.source, line: s.originalLine, column: s.originalColumn, ran });
    else if (s.originalColumn === seen.column) seen.ran = seen.ran || ran;
  }
  for (const at of first.values()) {
    const rel = sources[at.source] && relative(sources[at.source]);
    if (!rel || byNyc.has(rel)) continue;
    const set = lines(rel);
    if (at.ran) set.add(at.line + 1);
  }
  return true;
};
// A script Node holds a source map for (its source-map-cache entry).
const fromNodeMap = (scriptFile, entry, ranges) => {
  const starts = [];
  let length = 0;
  for (const n of entry.lineLengths) { starts.push(length); length += n + 1; }
  const base = entry.url && entry.url.startsWith('file://') ? url.fileURLToPath(entry.url) : scriptFile;
  return fromSourceMap(base, entry.data, painted(ranges, length), (line, column) => (starts[line] ?? length) + column);
};
// A script the preload saved (a runner's transform run by vm): its inline map is in positions of
// the transform, which the runner wrapped, on its first line, in a function whose length is the
// column offset it gave vm (vite-node gives it negative, so errors point into the transform; jest
// positive).
const inlineMap = (code) => {
  const at = code.lastIndexOf('sourceMappingURL=data:application/json');
  if (at < 0) return null;
  const text = code.slice(at).split('\n')[0].trim(), comma = text.indexOf(',');
  try {
    const data = text.slice(comma + 1);
    return JSON.parse(text.slice(0, comma).endsWith(';base64') ? Buffer.from(data, 'base64').toString('utf8') : decodeURIComponent(data));
  } catch { return null; }
};
const fromSaved = (saved, map, ranges) => {
  const starts = [];
  let length = 0;
  for (const line of saved.code.split('\n')) { starts.push(length); length += line.length + 1; }
  const count = painted(ranges, saved.code.length);
  return fromSourceMap(saved.filename, map, count, (line, column) => {
    const own = line - saved.lineOffset;
    return (starts[own] ?? length) + column + (own === 0 ? Math.abs(saved.columnOffset) : 0);
  });
};
// Each line of a file's text whose first character ran, the text starting at offset at of the script V8 covered.
const markText = (rel, text, count, at) => {
  const set = lines(rel);
  let offset = at;
  text.split('\n').forEach((line, i) => {
    const first = line.search(/\S/);
    if (first >= 0 && count[offset + first] > 0) set.add(i + 1);
    offset += line.length + 1;
  });
};
const readText = (file) => { try { return fs.readFileSync(file, 'utf8'); } catch { return null; } };
// Node compiles a file without its byte-order mark, so V8's offsets count from after it.
const direct = (file, ranges, length) => {
  const rel = relative(file), read = rel && !byNyc.has(rel) && /\.[cm]?js$/.test(rel) ? readText(file) : null;
  const text = read === null ? null : read.replace(/^\uFEFF/, '');
  if (text !== null && (length === null || length === text.length)) markText(rel, text, painted(ranges, text.length), 0);
};
// A script the preload saved with no map: a runner's module wrapper around the file's own text
// (jest with no transform; Module.wrap in vitest's vm pools), placed where that text sits in it.
// False when the text is not there once: code transformed without a map, which nothing places.
const fromWrapped = (saved, ranges) => {
  const rel = relative(saved.filename), text = rel && !byNyc.has(rel) ? readText(saved.filename) : null;
  const at = text ? saved.code.indexOf(text) : -1;
  if (at < 0 || saved.code.indexOf(text, at + 1) >= 0) return false;
  markText(rel, text, painted(ranges, saved.code.length), at);
  return true;
};
for (const name of list('.nyc_output')) {
  const report = name.endsWith('.json') ? readJson(path.join('.nyc_output', name)) : null;
  for (const [file, data] of Object.entries(report || {})) {
    const rel = relative(path.resolve(root, file));
    if (!rel || !data || !data.statementMap) continue;
    byNyc.add(rel);
    const set = lines(rel);
    for (const [id, at] of Object.entries(data.statementMap)) if (data.s && data.s[id] > 0) set.add(at.start.line);
  }
}
const saved = new Map();
for (const name of process.argv[3] ? list(process.argv[3]) : []) {
  const script = name.endsWith('.json') ? readJson(path.join(process.argv[3], name)) : null;
  if (!script || typeof script.code !== 'string') continue;
  const file = script.filename.startsWith('file://') ? url.fileURLToPath(script.filename) : script.filename;
  saved.set(file, [...(saved.get(file) || []), { ...script, filename: file }]);
}
for (const name of list(process.argv[2])) {
  const report = readJson(path.join(process.argv[2], name));
  if (!report) continue;
  const maps = report['source-map-cache'] || {};
  for (const script of report.result || []) {
    const file = script.url.startsWith('file://') ? url.fileURLToPath(script.url) : null;
    const ranges = script.functions.flatMap((f) => f.ranges), entry = maps[script.url];
    // The script's own source is the one as long as its top-level range (a file may be saved transformed more than one way).
    const length = ranges.reduce((longest, r) => Math.max(longest, r.endOffset), 0);
    const own = (saved.get(file || script.url) || []).find((s) => s.code.length === length);
    const map = own && inlineMap(own.code);
    if (own && (map ? fromSaved(own, map, ranges) : fromWrapped(own, ranges))) continue;
    // A loader may hand Node its transform as a data: URL (tsx does for TypeScript that ESM imports); its map still names the file.
    if (entry && entry.data && entry.lineLengths && fromNodeMap(file || path.join(root, 'genesis-unnamed.js'), entry, ranges)) continue;
    // A transform whose map places nothing is read on the file as plain code is: the best left.
    // One saved without a map is not read at all: its offsets are the transform's, not the file's.
    // Nor is a script the preload did not see (a test command that replaced NODE_OPTIONS) that is
    // not as long as the file: a runner's wrapper or transform, whose offsets are not the file's.
    if (file && (own ? map : !saved.has(file))) direct(file, ranges, own ? null : length);
  }
}
const out = {};
for (const [rel, set] of Object.entries(files)) {
  const sorted = [...set].sort((a, b) => a - b), runs = [];
  for (const n of sorted) { const last = runs[runs.length - 1]; if (last && last[1] === n - 1) last[1] = n; else runs.push([n, n]); }
  out[rel.split(path.sep).join('/')] = runs;
}
process.stdout.write(JSON.stringify(out));
`;
