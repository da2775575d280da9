/**
 * Run inside the gate after the tests, by Node: the lines of each file of the work dir (outside
 * node_modules) that the tests executed, as `{ path: [[from, to], …] }` on standard output.
 *
 * Three sources, each in the file's own positions:
 * - nyc's raw report (`.nyc_output`): its statement map is in the file's positions, while V8 saw
 *   nyc's instrumented copy, whose offsets mean nothing in the file; a statement that ran marks
 *   the line it starts on, and V8's view of that file is ignored.
 * - V8 coverage of a script Node holds a source map for (a compiler's output, a TypeScript loader's
 *   transform): each original line is placed by its first mapped column, executed when the
 *   generated code there ran. Type-only lines have no mapping, so they are never marked.
 * - V8 coverage of plain JavaScript (also what c8 writes, into the same NODE_V8_COVERAGE): a line is
 *   executed when its first character ran. Block ranges are painted outer first, so a block that
 *   never ran leaves its lines unmarked even inside a function that did. A file transformed
 *   without a source map (TypeScript under a runner that keeps none) is left out: offsets in its
 *   transform cannot be placed on it.
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
const fromSourceMap = (scriptFile, entry, ranges) => {
  const starts = [];
  let length = 0;
  for (const n of entry.lineLengths) { starts.push(length); length += n + 1; }
  const count = painted(ranges, length);
  const map = entry.data, base = entry.url && entry.url.startsWith('file://') ? url.fileURLToPath(entry.url) : scriptFile;
  const sources = (map.sources || []).map((s) => s.startsWith('file://') ? url.fileURLToPath(s) : path.resolve(path.dirname(base), map.sourceRoot || '', s));
  const first = new Map();
  for (const s of segments(map.mappings || '')) {
    const key = s.source + ':' + s.originalLine, ran = count[(starts[s.line] ?? length) + s.column] > 0;
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
};
const direct = (file, ranges) => {
  const rel = relative(file);
  if (!rel || byNyc.has(rel) || !/\.[cm]?js$/.test(rel)) return;
  let text; try { text = fs.readFileSync(file, 'utf8'); } catch { return; }
  const count = painted(ranges, text.length), set = lines(rel);
  let offset = 0;
  text.split('\n').forEach((line, i) => {
    const first = line.search(/\S/);
    if (first >= 0 && count[offset + first] > 0) set.add(i + 1);
    offset += line.length + 1;
  });
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
for (const dir of process.argv.slice(2)) {
  for (const name of list(dir)) {
    const report = readJson(path.join(dir, name));
    if (!report) continue;
    const maps = report['source-map-cache'] || {};
    for (const script of report.result || []) {
      const file = script.url.startsWith('file://') ? url.fileURLToPath(script.url) : null;
      const ranges = script.functions.flatMap((f) => f.ranges), entry = maps[script.url];
      // A loader may hand Node its transform as a data: URL (tsx does for TypeScript that ESM imports); its map still names the file.
      if (entry && entry.data && entry.lineLengths) fromSourceMap(file || path.join(root, 'genesis-unnamed.js'), entry, ranges);
      else if (file) direct(file, ranges);
    }
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
