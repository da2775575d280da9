import { NODE_COLLECTOR } from './node-collector.js';
import { NODE_PRELOAD } from './node-preload.js';
import { PYTHON_COLLECTOR } from './python-collector.js';

const MARKER = 'GENESIS-EXECUTED-LINES ';

/**
 * The test command run with coverage on, its exit status kept, the executed lines printed after it
 * on marked lines of the log: Node's (V8 coverage, nyc's report, source maps) by Node, Python's by
 * a `sitecustomize` every Python process loads. Each collector is there whatever the project is, so
 * a suite that runs both languages is covered in both, and a gate image without one of them loses
 * nothing but that language's lines.
 */
export function withExecutedLines(test: string): string {
  const node = Buffer.from(NODE_COLLECTOR).toString('base64');
  return [
    'export NODE_V8_COVERAGE="$(mktemp -d)"',
    'genesis_node="$(mktemp -d)" && mkdir -p "$genesis_node/scripts"',
    `cat > "$genesis_node/preload.cjs" <<'GENESIS_NODE_PRELOAD'\n${NODE_PRELOAD}\nGENESIS_NODE_PRELOAD`,
    'export GENESIS_NODE_SCRIPTS="$genesis_node/scripts" NODE_OPTIONS="--require $genesis_node/preload.cjs $NODE_OPTIONS"',
    'genesis_python="$(mktemp -d)" && mkdir -p "$genesis_python/lines"',
    `cat > "$genesis_python/sitecustomize.py" <<'GENESIS_PYTHON_COLLECTOR'\n${PYTHON_COLLECTOR}\nGENESIS_PYTHON_COLLECTOR`,
    'if [ -n "$PYTHONPATH" ]; then PYTHONPATH="$genesis_python:$PYTHONPATH"; else PYTHONPATH="$genesis_python"; fi',
    'export GENESIS_PYTHON_LINES="$genesis_python/lines" PYTHONPATH',
    `(${test})`,
    'status=$?',
    'unset PYTHONPATH GENESIS_PYTHON_LINES NODE_OPTIONS GENESIS_NODE_SCRIPTS',
    `lines="$(node -e 'eval(Buffer.from(process.argv[1], "base64").toString())' "${node}" "$NODE_V8_COVERAGE" "$genesis_node/scripts" 2>/dev/null)" && printf '\\n${MARKER}%s\\n' "$lines"`,
    `for f in "$genesis_python"/lines/*.json; do [ -s "$f" ] && printf '\\n${MARKER}%s\\n' "$(cat "$f")"; done`,
    'exit $status',
  ].join('\n');
}

/**
 * The executed lines of each file, read back from a gate log (every marked line, merged); null
 * when the log has none (neither a Node nor a Python suite, or one whose collector could not run).
 */
export function readExecutedLines(log: string): Map<string, Set<number>> | null {
  const files = new Map<string, Set<number>>();
  let found = false;
  for (let at = log.indexOf(MARKER); at >= 0; at = log.indexOf(MARKER, at + 1)) {
    // Only a marker at the start of a line is the collectors' (the command itself quotes it).
    if (at > 0 && log[at - 1] !== '\n') continue;
    const line = log.slice(at + MARKER.length).split('\n')[0] ?? '';
    let parsed: Record<string, Array<[number, number]>>;
    try {
      parsed = JSON.parse(line) as Record<string, Array<[number, number]>>;
    } catch {
      continue;
    }
    found = true;
    for (const [path, runs] of Object.entries(parsed)) {
      const lines = files.get(path) ?? new Set<number>();
      for (const [from, to] of runs) for (let n = from; n <= to; n += 1) lines.add(n);
      files.set(path, lines);
    }
  }
  return found ? files : null;
}
