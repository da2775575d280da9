/**
 * Pass/fail counts read from what test runners print: node --test (tap and spec reporters),
 * generic TAP 13/14, JUnit XML, or a world's own regexes. Pure; a format that is not recognised
 * gives null, and the gate falls back to exit codes.
 */
import { createHash } from 'node:crypto';

/** One failing test: its name (ancestors joined with ' > ') and the first lines of its error. */
export interface TestFailure { name: string; message: string }

/** Counts of leaf tests; todo tests count as skipped, cancelled (timed-out) ones as failed. */
export interface TestReport {
  format: 'tap' | 'junit' | 'node-test' | 'pattern';
  passed: number;
  failed: number;
  skipped: number;
  failures: TestFailure[];
}

// eslint-disable-next-line no-control-regex -- ANSI colour codes start with ESC
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const MESSAGE_LIMIT = 500;
const TAP_POINT = /^(\s*)(not ok|ok)\b(?:\s+\d+)?(?:\s*-)?\s*(.*)$/;
const TAP_DIRECTIVE = /(?<!\\)#\s*(skip|todo)\S*\s*(.*)$/i;
const SPEC_POINT = /^(\s*)([✔✖﹣])\s+(.*?)(?:\s+\([\d.]+ms\)(?:\s+#\s*(.*))?)?$/;
const SUMMARY = /^(?:#|ℹ)\s+(tests|suites|pass|fail|cancelled|skipped|todo)\s+(\d+)\s*$/;

interface Point { indent: number; ok: boolean; directive: boolean; name: string; message: string; leaf: boolean }

const isDiagnostic = (line: string | undefined): boolean =>
  line !== undefined && /^\s*#/.test(line) && !line.includes('# Subtest:') && !SUMMARY.test(line.trim());
const clip = (text: string): string => (text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text);
const indentOf = (line: string): number => line.length - line.trimStart().length;

/** Ancestor names by indent; setting one forgets deeper ones, as a new sibling closes them. */
function pushAncestor(ancestors: Map<number, string>, indent: number, name: string): void {
  for (const depth of ancestors.keys()) if (depth >= indent) ancestors.delete(depth);
  ancestors.set(indent, name);
}

function fullName(ancestors: Map<number, string>, indent: number, name: string): string {
  const above = [...ancestors].filter(([depth]) => depth < indent).sort(([a], [b]) => a - b);
  return [...above.map(([, n]) => n), name].join(' > ');
}

/** Children are printed before their parent's result line, so a shallower point closes a parent. */
function addPoint(points: Point[], point: Point): void {
  const previous = points[points.length - 1];
  if (previous !== undefined && previous.indent > point.indent) point.leaf = false;
  points.push(point);
}

/** The `message:` or `error:` value of a TAP YAML block (plain, quoted or a `|`/`>` block scalar). */
function yamlMessage(block: readonly string[]): string {
  const base = Math.min(...block.filter((l) => l.trim() !== '').map(indentOf));
  for (const key of ['message', 'error']) {
    const at = block.findIndex((l) => indentOf(l) === base && l.trimStart().startsWith(`${key}:`));
    if (at === -1) continue;
    const value = (block[at] as string).trimStart().slice(key.length + 1).trim();
    if (/^[|>][-+]?$/.test(value)) {
      const body: string[] = [];
      for (const l of block.slice(at + 1)) if (l.trim() === '' || indentOf(l) > base) body.push(l.trim()); else break;
      return body.filter(Boolean).join(' ');
    }
    if (value.startsWith("'")) return value.slice(1, -1).replaceAll("''", "'");
    if (value.startsWith('"')) { try { return String(JSON.parse(value)); } catch { return value.slice(1, -1); } }
    return value;
  }
  return '';
}

function tally(format: TestReport['format'], points: readonly Point[], summary: Map<string, number>): TestReport {
  const leaves = points.filter((p) => p.leaf);
  const report: TestReport = {
    format,
    passed: leaves.filter((p) => p.ok && !p.directive).length,
    failed: leaves.filter((p) => !p.ok && !p.directive).length,
    skipped: leaves.filter((p) => p.directive).length,
    failures: leaves.filter((p) => !p.ok && !p.directive).map((p) => ({ name: p.name, message: clip(p.message) })),
  };
  // The runner's own summary counts what a crashed or filtered stream may not show; prefer it.
  if (summary.has('pass') && summary.has('fail')) {
    report.passed = summary.get('pass') ?? 0;
    report.failed = (summary.get('fail') ?? 0) + (summary.get('cancelled') ?? 0);
    if (summary.has('skipped') || summary.has('todo')) {
      report.skipped = (summary.get('skipped') ?? 0) + (summary.get('todo') ?? 0);
    }
  }
  return report;
}

function parseTap(lines: readonly string[]): TestReport | null {
  const points: Point[] = [];
  const ancestors = new Map<number, string>();
  const summary = new Map<string, number>();
  let planned = 0;
  let recognised = false;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const indent = indentOf(line);
    const text = line.trim();
    const sum = indent === 0 ? SUMMARY.exec(text) : null;
    if (sum) summary.set(sum[1] as string, (summary.get(sum[1] as string) ?? 0) + Number(sum[2]));
    else if (text.startsWith('# Subtest:')) pushAncestor(ancestors, indent, text.slice(10).trim());
    else if (/^TAP version \d+$/.test(text)) recognised = true;
    else if (/^1\.\.\d+/.test(text)) {
      recognised = true;
      if (indent === 0) planned += Number(/^1\.\.(\d+)/.exec(text)?.[1]);
    } else if (/^Bail out!/.test(text)) {
      points.push({ indent, ok: false, directive: false, name: 'Bail out!', message: text.slice(9).trim(), leaf: true });
    } else {
      const match = TAP_POINT.exec(line);
      if (!match) continue;
      recognised ||= /^(not )?ok \d/.test(text);
      const description = match[3] as string;
      const directive = TAP_DIRECTIVE.exec(description);
      const name = (directive ? description.slice(0, directive.index) : description).trim().replace(/\\([#\\])/g, '$1');
      let message = '';
      if (lines[i + 1]?.trim() === '---') {
        const block: string[] = [];
        for (i += 2; i < lines.length && (lines[i] as string).trim() !== '...'; i += 1) block.push(lines[i] as string);
        message = yamlMessage(block);
      } else {
        // Without YAML, Test::More-style '#' comments right after the point explain the failure.
        const comments: string[] = [];
        while (isDiagnostic(lines[i + 1])) comments.push((lines[(i += 1)] as string).trim().replace(/^#\s*/, ''));
        message = comments.join(' ');
      }
      const ok = match[2] === 'ok';
      addPoint(points, { indent, ok, directive: directive !== null, name: fullName(ancestors, indent, name), message, leaf: true });
    }
  }
  if (!recognised) return null;
  const topLevel = points.filter((p) => p.indent === 0).length;
  if (planned > topLevel && !summary.has('pass')) {
    const message = `planned ${planned} tests, ${topLevel} ran`;
    points.push({ indent: 0, ok: false, directive: false, name: '(plan)', message, leaf: true });
  }
  const node = summary.has('suites') || summary.has('cancelled') || lines.some((l) => l.trim().startsWith('duration_ms:'));
  return tally(node ? 'node-test' : 'tap', points, summary);
}

function parseSpec(lines: readonly string[]): TestReport | null {
  const points: Point[] = [];
  const ancestors = new Map<number, string>();
  const summary = new Map<string, number>();
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const sum = SUMMARY.exec(line.trim());
    if (sum) { summary.set(sum[1] as string, (summary.get(sum[1] as string) ?? 0) + Number(sum[2])); continue; }
    // The reporter repeats every failure after the summary; counting them again would double them.
    if (/^\s*✖ failing tests:/.test(line)) break;
    const suite = /^(\s*)▶\s+(.*)$/.exec(line);
    if (suite) { pushAncestor(ancestors, (suite[1] as string).length, (suite[2] as string).trim()); continue; }
    const match = SPEC_POINT.exec(line);
    if (!match) continue;
    const indent = (match[1] as string).length;
    const body: string[] = [];
    for (let j = i + 1; match[2] === '✖' && j < lines.length; j += 1) {
      const next = lines[j] as string;
      if (next.trim() === '') continue;
      if (indentOf(next) <= indent || /^\s*at\s/.test(next)) break;
      body.push(next.trim());
    }
    // Node marks skipped tests with ﹣ and appends '# reason' only to skipped and todo tests.
    const directive = match[2] === '﹣' || match[4] !== undefined;
    const name = fullName(ancestors, indent, (match[3] as string).trim());
    addPoint(points, { indent, ok: match[2] !== '✖', directive, name, message: body.join(' '), leaf: true });
  }
  // Other tools print ✔ too; Node's summary is what makes this spec output.
  return summary.has('tests') ? tally('node-test', points, summary) : null;
}

/**
 * Reads node --test output (the tap reporter Node 20 uses off a TTY, and the spec reporter) or
 * generic TAP 13/14 (test points, plan, YAML diagnostics, nested subtests, Bail out!). Leaf tests
 * are counted, as Node's summary lines do, and the summary is preferred when present.
 * @returns null when no format is recognised.
 */
export function parseTestOutput(output: string): TestReport | null {
  const lines = output.replace(ANSI, '').split(/\r?\n/);
  return parseTap(lines) ?? parseSpec(lines);
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const decodeXml = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref] ?? whole;
  });
const escapeXml = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

function attributes(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, key = '', double, single] of source.matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    found.set(key, decodeXml(double ?? single ?? ''));
  }
  return found;
}

/**
 * Reads JUnit XML as jest-junit, pytest, surefire and most CI tools write it: every `testcase`
 * is one test, failed by a `failure` or `error` child, skipped by a `skipped` one. Without any
 * testcase, the counts on `testsuites` (or the sum over `testsuite`) are used.
 * @returns null when the text holds no JUnit elements.
 */
export function parseJUnitXml(xml: string): TestReport | null {
  // One pass turns CDATA into escaped text and drops comments, so markup inside either is never
  // read as tags, whichever of the two comes first.
  const clean = xml.replace(
    /<!\[CDATA\[([\s\S]*?)\]\]>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>/gi,
    (_, cdata?: string) => escapeXml(cdata ?? ''),
  );
  const report: TestReport = { format: 'junit', passed: 0, failed: 0, skipped: 0, failures: [] };
  const totals = { suites: new Map<string, number>(), root: new Map<string, number>() };
  let seen = false;
  let testcase: { name: string; status: 'passed' | 'failed' | 'skipped'; message: string; text: string } | null = null;
  let capturing = false;
  let last = 0;
  for (const tag of clean.matchAll(/<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g)) {
    if (capturing && testcase) testcase.text += clean.slice(last, tag.index);
    last = tag.index + tag[0].length;
    const [, closing = '', element = '', attrText = '', selfClosing = ''] = tag;
    const attrs = attributes(attrText);
    if (element === 'testsuites' || element === 'testsuite') {
      seen = true;
      if (closing) continue;
      const into = element === 'testsuites' ? totals.root : totals.suites;
      for (const key of ['tests', 'failures', 'errors', 'skipped']) {
        into.set(key, (into.get(key) ?? 0) + (Number(attrs.get(key)) || 0));
      }
    } else if (element === 'testcase') {
      seen = true;
      if (!closing) {
        const classname = attrs.get('classname') ?? '';
        const name = attrs.get('name') ?? '';
        const full = classname === '' || name.startsWith(classname) ? name || classname : `${classname} > ${name}`;
        testcase = { name: full, status: 'passed', message: '', text: '' };
      }
      if ((closing || selfClosing) && testcase) {
        report[testcase.status] += 1;
        const message = testcase.message || decodeXml(testcase.text.trim().split('\n')[0] ?? '');
        if (testcase.status === 'failed') report.failures.push({ name: testcase.name, message: clip(message.trim()) });
        testcase = null;
      }
    } else if (testcase && (element === 'failure' || element === 'error')) {
      capturing = !closing && !selfClosing;
      if (!closing) { testcase.status = 'failed'; testcase.message ||= attrs.get('message') ?? ''; }
    } else if (testcase && element === 'skipped' && !closing && testcase.status === 'passed') {
      testcase.status = 'skipped';
    }
  }
  if (!seen) return null;
  if (report.passed + report.failed + report.skipped === 0) {
    const t = totals.root.get('tests') ? totals.root : totals.suites;
    const failed = (t.get('failures') ?? 0) + (t.get('errors') ?? 0);
    report.skipped = t.get('skipped') ?? 0;
    report.failed = failed;
    report.passed = Math.max(0, (t.get('tests') ?? 0) - failed - report.skipped);
  }
  return report;
}

/** Null when `source` is a usable count regex (valid, with a capture group); else what is wrong. */
export function describeCountPatternProblem(source: string): string | null {
  try {
    // The added empty alternative always matches, and the match array has one slot per group.
    const groups = new RegExp(`${source}|`).exec('')?.length ?? 1;
    if (groups > 1) return null;
    return `pattern /${source}/ has no capture group; wrap the count in parentheses, e.g. "(\\d+) passing"`;
  } catch (error) {
    return `pattern /${source}/ is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * Counts from a world's own regexes (JavaScript syntax, multiline), whose first capture group is
 * the count; every match is added, so output of several runs sums up.
 * @returns null when a pattern is invalid or neither pattern matches.
 */
export function parseWithPattern(output: string, patterns: { passed?: string; failed?: string }): TestReport | null {
  const text = output.replace(ANSI, '');
  const count = (source: string | undefined): number | null => {
    if (source === undefined || describeCountPatternProblem(source) !== null) return null;
    const matches = [...text.matchAll(new RegExp(source, 'gm'))];
    return matches.length === 0 ? null : matches.reduce((sum, m) => sum + (Number(m[1]) || 0), 0);
  };
  const passed = count(patterns.passed);
  const failed = count(patterns.failed);
  if (passed === null && failed === null) return null;
  return { format: 'pattern', passed: passed ?? 0, failed: failed ?? 0, skipped: 0, failures: [] };
}

/**
 * Sums reports (the test command's and each check's); the format is the first one's.
 * @returns null when every report is null.
 */
export function mergeReports(reports: readonly (TestReport | null)[]): TestReport | null {
  const present = reports.filter((r): r is TestReport => r !== null);
  const first = present[0];
  if (first === undefined) return null;
  return present.slice(1).reduce<TestReport>((sum, r) => ({
    format: sum.format,
    passed: sum.passed + r.passed,
    failed: sum.failed + r.failed,
    skipped: sum.skipped + r.skipped,
    failures: [...sum.failures, ...r.failures],
  }), { ...first, failures: [...first.failures] });
}

/** Removes what differs between two runs of the same failure: colours, times, ids, paths, numbers. */
export function normalizeFailureText(text: string): string {
  return text
    .replace(ANSI, '')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
    .replace(/\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b/g, '<time>')
    .replace(/\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds|m|min|minutes|h)\b/g, '<duration>')
    .replace(/\b(0x[0-9a-f]+|(?=[0-9a-f-]*\d)[0-9a-f]{7,}(-[0-9a-f]{4,})*)\b/gi, '<id>')
    // Workspaces and temp dirs differ per episode; the file's own name is the useful part.
    .replace(/(?<![\w.@~-])(file:\/\/)?(\/[^\s/'"`:()[\]]+)+\//g, '…/')
    .replace(/\d+/g, '<n>')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

const SIGNATURE_LINES = 20;

/**
 * A stable short signature of a failure, so the scheduler can tell whether two attempts failed
 * the same way: the reason plus the sorted failing test names when known, else the last lines
 * of the log (or the reason alone), normalized, hashed to 12 hex characters.
 */
export function failureSignature(reason: string, report: TestReport | null, logTail: string): string {
  const names = [...new Set((report?.failures ?? []).map((f) => normalizeFailureText(f.name)))].sort();
  // A tail cut at a byte count may start mid-line; keeping only the last lines drops that one.
  const tail = logTail.split(/\r?\n/).filter((l) => l.trim() !== '').slice(-SIGNATURE_LINES).map(normalizeFailureText);
  const basis = names.length > 0 ? ['tests', ...names] : ['log', ...tail];
  return createHash('sha256').update([normalizeFailureText(reason), ...basis].join('\n')).digest('hex').slice(0, 12);
}
