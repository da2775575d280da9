/**
 * JUnit XML as pytest --junitxml, jest-junit, Maven Surefire, gotestsum, cargo nextest and
 * `node --test --test-reporter=junit` write it, read with fast-xml-parser. Pure.
 *
 * Every `testcase` element is one test: failed by a `failure` or `error` child, skipped by a
 * `skipped` one, else passed. The `tests`/`failures` attributes of `testsuite(s)` are a claim, not
 * a count (they disagree with the cases in real reports: jest-junit leaves todo tests out), so
 * they are read only when a report holds no testcase at all, and such a report shows no test that
 * ran (the gate's `no-tests-ran`).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { isFileLevelName, type TestCase, type TestRun } from './cases.js';

/** A document that is not well-formed XML, or whose root is not a JUnit element. */
export class JUnitFormatError extends Error {}

type Node = Record<string, unknown>;

const LISTS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (name) => LISTS.has(name),
  // Stack traces are full of &lt; and &gt;: the default cap on expansions is far too low for them.
  processEntities: { enabled: true, maxTotalExpansions: 10_000_000, maxExpandedLength: 100_000_000 },
});

const list = (value: unknown): Node[] => (Array.isArray(value) ? (value as Node[]) : []);
const attr = (node: Node, key: string): string => {
  const value = node[`@_${key}`];
  return typeof value === 'string' ? value : '';
};
const text = (node: Node | string): string => (typeof node === 'string' ? node : typeof node['#text'] === 'string' ? node['#text'] : '');

// node --test writes classname="test" for every case; its suites carry the names instead.
const uninformative = (classname: string): boolean => classname === '' || classname === 'test';

function caseName(node: Node, suites: readonly string[]): string {
  const classname = attr(node, 'classname').trim();
  const name = attr(node, 'name').trim();
  if (uninformative(classname)) return [...suites, name].filter(Boolean).join(' > ');
  return name === '' ? classname : name.startsWith(classname) ? name : `${classname} > ${name}`;
}

function toCase(node: Node, suites: readonly string[]): TestCase {
  const problem = [...list(node.failure), ...list(node.error)][0];
  const skip = list(node.skipped)[0];
  const name = caseName(node, suites);
  const message = problem === undefined ? '' : (attr(problem, 'message') || text(problem).trim().split(/\r?\n/)[0] || '').trim();
  // node writes a todo test that ran with its <skipped type="todo"/>, and a <failure> too when its body threw: a todo, not a failure.
  const todo = skip !== undefined && attr(skip, 'type') === 'todo';
  return {
    name,
    outcome: problem !== undefined && !todo ? 'failed' : skip !== undefined ? 'skipped' : 'passed',
    message: todo ? '' : message,
    fileLevel: isFileLevelName(attr(node, 'name').trim()),
    ...(todo ? { ranAs: problem === undefined ? ('passed' as const) : ('failed' as const) } : {}),
  };
}

function collect(node: Node, suites: readonly string[], cases: TestCase[]): void {
  for (const testcase of list(node.testcase)) cases.push(toCase(testcase, suites));
  for (const suite of list(node.testsuite)) collect(suite, [...suites, attr(suite, 'name').trim()], cases);
}

/** The claimed counts of a report with no testcase: the root's, else the sum of its suites'. */
function claimedCounts(root: Node, rootName: string): TestRun['summary'] {
  const read = (nodes: Node[]) => {
    const sum = (key: string) => nodes.reduce((total, n) => total + (Number(attr(n, key)) || 0), 0);
    const failed = sum('failures') + sum('errors');
    const skipped = sum('skipped');
    return { passed: Math.max(0, sum('tests') - failed - skipped), failed, skipped };
  };
  if (rootName === 'testsuites' && attr(root, 'tests') !== '') return read([root]);
  return read(rootName === 'testsuite' ? [root] : list(root.testsuite));
}

/**
 * Reads one JUnit XML document.
 * @throws JUnitFormatError when the text is not well-formed XML or its root is not
 *   `testsuites` or `testsuite`.
 */
export function parseJUnit(xml: string): TestRun {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new JUnitFormatError(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  const doc = parser.parse(xml) as Node;
  const rootName = Object.keys(doc).find((k) => !k.startsWith('?') && !k.startsWith('#'));
  const root = rootName === undefined ? undefined : doc[rootName];
  if (rootName !== 'testsuites' && rootName !== 'testsuite')
    throw new JUnitFormatError(`not JUnit XML: its root element is ${rootName ? `<${rootName}>` : 'missing'}, not <testsuites> or <testsuite>`);
  // isArray makes a root <testsuite> a list of one; <testsuites> is an object, or '' when empty.
  const rootNode: Node = Array.isArray(root) ? ((root[0] ?? {}) as Node) : typeof root === 'object' && root !== null ? (root as Node) : {};
  const cases: TestCase[] = [];
  if (rootName === 'testsuite') collect(rootNode, [attr(rootNode, 'name').trim()].filter(Boolean), cases);
  else collect(rootNode, [], cases);
  return { format: 'junit', cases, summary: cases.length === 0 ? claimedCounts(rootNode, rootName) : null };
}

/**
 * The JUnit document a runner printed on standard output (node's junit reporter), if any. It must
 * close the output and its root must start a line: a runner writes its report last, whole, while
 * XML that a test printed is followed by the runner's own lines (or, in node's TAP, sits inside a
 * `#` comment). Text that holds none, or only a broken one, gives null.
 */
export function findJUnitInOutput(output: string): TestRun | null {
  const text = output.trimEnd();
  if (!text.endsWith('</testsuites>') && !text.endsWith('</testsuite>')) return null;
  const starts = [...text.matchAll(/^(?:<\?xml|<testsuites?[\s>/])/gm)].map((m) => m.index);
  // The outermost root is the earliest start whose text parses; later ones may be nested suites.
  for (const start of starts) {
    try {
      return parseJUnit(text.slice(start));
    } catch {}
  }
  return null;
}
