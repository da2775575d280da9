/**
 * JUnit XML as pytest --junitxml, jest-junit, Maven Surefire, gotestsum, cargo nextest and
 * `node --test --test-reporter=junit` write it, held whole (printed on standard output) and read
 * with the gate's one XML reader, the streaming one of junit-stream.ts. Pure.
 *
 * Every `testcase` element is one test: failed by a `failure` or `error` child, skipped by a
 * `skipped` one, else passed. The `tests`/`failures` attributes of `testsuite(s)` are a claim, not
 * a count (they disagree with the cases in real reports: jest-junit leaves todo tests out), so
 * they are read only when a report holds no testcase at all, and such a report shows no test that
 * ran (the gate's `no-tests-ran`).
 */
import type { TestRun } from './cases.js';
import { JUnitFormatError, JUnitStreamParser } from './junit-stream.js';

export { JUnitFormatError };

/** Starts of a root looked at in one output, the last ones: each is read to the end of the output. */
const MAX_STARTS = 8;

/**
 * Reads one JUnit XML document.
 * @throws JUnitFormatError when the text is not well-formed XML or its root is not
 *   `testsuites` or `testsuite`.
 */
export function parseJUnit(xml: string): TestRun {
  const parser = new JUnitStreamParser();
  parser.write(xml);
  return parser.end();
}

/**
 * The JUnit document a runner printed on standard output (node's junit reporter), if any. It must
 * close the output and its root must start a line: a runner writes its report last, whole, while
 * XML that a test printed is followed by the runner's own lines (or, in node's TAP, sits inside a
 * `#` comment). Text that holds none, or only a broken one, gives null. Only the last few starts
 * are tried, each read to the end: lines a test printed before the report cannot make its reading
 * take the number of such lines times the output.
 */
export function findJUnitInOutput(output: string): TestRun | null {
  const text = output.trimEnd();
  if (!text.endsWith('</testsuites>') && !text.endsWith('</testsuite>')) return null;
  const starts = [...text.matchAll(/^(?:<\?xml|<testsuites?[\s>/])/gm)].map((m) => m.index).slice(-MAX_STARTS);
  // The outermost root is the earliest start whose text parses; later ones may be nested suites.
  for (const start of starts) {
    try {
      return parseJUnit(text.slice(start));
    } catch {}
  }
  return null;
}
