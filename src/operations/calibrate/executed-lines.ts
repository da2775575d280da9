const MARKER = 'GENESIS-EXECUTED-LINES ';

/**
 * Run inside the gate after the tests, on the V8 coverage Node wrote (NODE_V8_COVERAGE): for each
 * file of the work dir outside node_modules, the lines whose first character ran, as ranges, on
 * one marked line of the log. Block ranges are painted outer first, so a block that never ran
 * leaves its lines unmarked even inside a function that did.
 */
const IN_GATE = `
const fs = require('fs'), path = require('path'), url = require('url');
const dir = process.argv[2], root = process.cwd(), files = {};
for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
  let report; try { report = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')); } catch { continue; }
  for (const script of report.result || []) {
    if (!script.url.startsWith('file://')) continue;
    const file = url.fileURLToPath(script.url), rel = path.relative(root, file);
    if (rel.startsWith('..') || rel.split(path.sep).includes('node_modules')) continue;
    let text; try { text = fs.readFileSync(file, 'utf8'); } catch { continue; }
    const ranges = script.functions.flatMap((f) => f.ranges).sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
    const count = new Int32Array(text.length);
    for (const r of ranges) count.fill(r.count > 0 ? 1 : 0, r.startOffset, Math.min(r.endOffset, text.length));
    const lines = files[rel] || (files[rel] = new Set());
    let offset = 0;
    text.split('\\n').forEach((line, i) => {
      const first = line.search(/\\S/);
      if (first >= 0 && count[offset + first] > 0) lines.add(i + 1);
      offset += line.length + 1;
    });
  }
}
const out = {};
for (const [rel, set] of Object.entries(files)) {
  const sorted = [...set].sort((a, b) => a - b), runs = [];
  for (const n of sorted) { const last = runs[runs.length - 1]; if (last && last[1] === n - 1) last[1] = n; else runs.push([n, n]); }
  out[rel.split(path.sep).join('/')] = runs;
}
console.log(${JSON.stringify(MARKER)} + JSON.stringify(out));
`;

/** The test command run with coverage on, its exit status kept, the executed lines printed after it. */
export function withExecutedLines(test: string): string {
  const script = Buffer.from(IN_GATE).toString('base64');
  return [
    'export NODE_V8_COVERAGE="$(mktemp -d)"',
    `(${test})`,
    'status=$?',
    `node -e 'eval(Buffer.from(process.argv[1], "base64").toString())' "${script}" "$NODE_V8_COVERAGE" 2>/dev/null || true`,
    'exit $status',
  ].join('\n');
}

/** The executed lines of each file, read back from a gate log; null when the log has none (not a Node test suite). */
export function readExecutedLines(log: string): Map<string, Set<number>> | null {
  const at = log.lastIndexOf(MARKER);
  if (at < 0) return null;
  const line = log.slice(at + MARKER.length).split('\n')[0] ?? '';
  let parsed: Record<string, Array<[number, number]>>;
  try {
    parsed = JSON.parse(line) as Record<string, Array<[number, number]>>;
  } catch {
    return null;
  }
  const files = new Map<string, Set<number>>();
  for (const [path, runs] of Object.entries(parsed)) {
    const lines = new Set<number>();
    for (const [from, to] of runs) for (let n = from; n <= to; n += 1) lines.add(n);
    files.set(path, lines);
  }
  return files;
}
