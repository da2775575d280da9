import { describe, it } from 'vitest';
import { isFileLevelName, stableTestName } from '../../../src/gate/reports/cases.js';
import { parseJest } from '../../../src/gate/reports/jest.js';
import { findJUnitInOutput, parseJUnit } from '../../../src/gate/reports/junit.js';
import { JUnitStreamParser } from '../../../src/gate/reports/junit-stream.js';
import { failureSignature, normalizeFailureText, parseTestOutput, parseWithPattern } from '../../../src/gate/reports/printed-counts.js';
import { parseOutput } from '../../../src/gate/reports/read-report.js';
import { runnerSummaries, summaryMismatch } from '../../../src/gate/reports/runner-summary.js';
import { parseSpec } from '../../../src/gate/reports/spec.js';
import { parseTap } from '../../../src/gate/reports/tap.js';
import { parseVitest } from '../../../src/gate/reports/vitest.js';
import { expectLinear } from '../../helpers/linear-time.js';

/**
 * Every reader of what the code under test prints or writes, on the shapes that make a
 * backtracking expression or a loop that starts over take the square of its input: long runs of
 * spaces where a lazy name meets optional white space, tokens that nested quantifiers can split
 * many ways, huge lines, control characters, deep nesting, many lines that each start a scan. A
 * line of node's spec reporter with 40k spaces took 9.8 s in the gate's process before.
 */
const sp = (n: number) => ' '.repeat(n);
const lines = (n: number, line: (i: number) => string) => {
  const out: string[] = [];
  for (let size = 0, i = 0; size < n; i++) {
    const next = line(i);
    out.push(next);
    size += next.length + 1;
  }
  return out.join('\n');
};
const quietly = (read: (text: string) => unknown) => (text: string) => {
  try {
    return read(text);
  } catch {
    return null; // a refusal is an answer too: what is timed is reaching it
  }
};

const SPEC_TAIL = '\nℹ tests 1\nℹ suites 0\nℹ pass 1\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 5\n';
const JEST_TAIL = '\n\nTest Suites: 1 passed, 1 total\nTests:       1 passed, 1 total\n';
const VITEST_TAIL = '\n Test Files  1 passed (1)\n      Tests  1 passed (1)\n';
const ESC = '\u001b';

const SHAPES: Array<[string, (text: string) => unknown, (n: number) => string]> = [
  ['spec: a point with a long run of spaces in its name', parseSpec, (n) => `✔ a${sp(n)}x${SPEC_TAIL}`],
  ['spec: spaces around a duration and a reason', parseSpec, (n) => `✔ a${sp(n)}(1ms)${sp(n)}#${sp(n)}x (2ms) y${SPEC_TAIL}`],
  ['spec: durations one after another', parseSpec, (n) => `✖ a${' (1ms)'.repeat(n / 6)} x${SPEC_TAIL}`],
  ['spec: a staircase of failing points (each reads the lines below it)', parseSpec, (n) => `${lines(n, (i) => `${sp(i % 400)}✖ t${i}`)}${SPEC_TAIL}`],
  ['spec: suites nested deep by indent', parseSpec, (n) => `${lines(n, (i) => `${sp(i % 500)}▶ s${i}`)}\n✔ t (1ms)${SPEC_TAIL}`],
  [
    'spec: through the dispatcher, spaces and colour codes',
    (t) => parseOutput(t),
    (n) => `${`${ESC}[31m✔${ESC}[0m a`}${sp(n)}${`${ESC}[`.repeat(n / 4)}x${SPEC_TAIL}`,
  ],
  ['tap: many failing points, each with comments', (t) => parseTap(t), (n) => `TAP version 13\n${lines(n, (i) => `not ok ${i + 1} - t\n# why`)}\n1..${n}\n`],
  [
    'tap: long runs of spaces in points and comments',
    (t) => parseTap(t),
    (n) => `TAP version 13\nok 1 - a${sp(n)}x\n#${sp(n)}pass${sp(n)}1x\n1..1\n# pass 1\n`,
  ],
  ['tap: many version headers', (t) => parseTap(t), (n) => lines(n, () => 'TAP version 13\n')],
  ['tap: control characters', (t) => parseTap(t), (n) => `TAP version 13\nok 1 - ${'\u0000\r\u0007'.repeat(n / 3)}\n1..1\n`],
  ['jest: a point with a long run of spaces', parseJest, (n) => `PASS a.test.js\n  ✓ a${sp(n)}x${JEST_TAIL}`],
  ['jest: a group name with a long run of spaces', parseJest, (n) => `PASS a.test.js\n  g${sp(n)}x\n    ✓ t (1 ms)${JEST_TAIL}`],
  ['jest: a failure title with a long run of spaces', parseJest, (n) => `FAIL a.test.js\n  ● a${sp(n)}x\n\n    boom${JEST_TAIL}`],
  ['jest: many failures, each read with its message', parseJest, (n) => `FAIL a.test.js\n${lines(n, (i) => `  ● t${i}\n\n    boom`)}${JEST_TAIL}`],
  ['jest: counts that nested quantifiers can split', parseJest, (n) => `Tests: ${'1 passed, '.repeat(n / 10)}x${JEST_TAIL}`],
  ['vitest: a named test with a long run of spaces', parseVitest, (n) => `✓ a.test.ts > b${sp(n)}x${VITEST_TAIL}`],
  ['vitest: a failure with a long run of spaces', parseVitest, (n) => `FAIL a.test.ts > b${sp(n)}x\nboom${VITEST_TAIL}`],
  ['vitest: durations one after another', parseVitest, (n) => `✓ a.test.ts > b${' 1ms'.repeat(n / 4)} x${VITEST_TAIL}`],
  ['vitest: counts that nested quantifiers can split', parseVitest, (n) => `Tests ${'1 passed | '.repeat(n / 11)}x${VITEST_TAIL}`],
  [
    'runner summaries: pytest, jest and vitest count lists',
    runnerSummaries,
    (n) => `${'1 passed, '.repeat(n / 10)}x in 1s\nTests: ${'1 a, '.repeat(n / 5)}x\nTests ${'1 a | '.repeat(n / 5)}(1)`,
  ],
  ['runner summaries: held against a report', (t) => summaryMismatch(t, { passed: 1, failed: 0 }), (n) => lines(n, () => '# pass 1')],
  ['failure text: dash-joined words', normalizeFailureText, (n) => 'a-'.repeat(n / 2)],
  ['failure text: hex groups that end in a letter', normalizeFailureText, (n) => `${'aaaaaaa-'.repeat(n / 8)}g`],
  ['failure text: slashes and spaces', normalizeFailureText, (n) => `${'/!'.repeat(n / 4)}${sp(n / 2)}x`],
  ['failure signature: the log tail', (t) => failureSignature('tests-failed', null, t), (n) => lines(n, (i) => `${'a-'.repeat(i % 50)}${sp(i % 80)}/x/y:${i}`)],
  ['test names: addresses and temporary paths', stableTestName, (n) => `0x${'a'.repeat(n / 2)}g /tmp/${'x'.repeat(n / 2)}`],
  ['test names: dates without their time', stableTestName, (n) => `${'2026-12-07T1 '.repeat(n / 13)}${'Mon Dec 07 2026 15:58:03 GMT '.repeat(n / 30)}`],
  ['test names: a file-level name full of dots', isFileLevelName, (n) => `/${'.'.repeat(n)}x`],
  [
    'count patterns: a world pattern over spaces',
    (t) => parseWithPattern(t, { passed: '(\\d+) passing', failed: '(\\d+) failing' }),
    (n) => `${sp(n)}1 passing\n${'1 '.repeat(n / 2)}`,
  ],
  ['printed counts: spaces through every format', parseTestOutput, (n) => `${sp(n)}\n✔ x${sp(n)}y\n  ✓ z${sp(n)}w${SPEC_TAIL}`],
  ['JUnit: elements nested deep', quietly(parseJUnit), (n) => `<testsuites>${'<testsuite name="s">'.repeat(n / 20)}<testcase name="t"/>`],
  [
    'JUnit: suites nested as deep as allowed, with cases at each level',
    quietly(parseJUnit),
    (n) => {
      const depth = 200;
      const cases = '<testcase name="t"/>'.repeat(Math.max(1, Math.floor(n / 20 / depth)));
      return `<testsuites>${`<testsuite name="${'s'.repeat(40)}">${cases}`.repeat(depth)}${'</testsuite>'.repeat(depth)}</testsuites>`;
    },
  ],
  [
    'JUnit: long attribute values and text with spaces and entities',
    quietly(parseJUnit),
    (n) =>
      `<testsuite><testcase name="a${sp(n)}b"><failure message="${'&amp; '.repeat(n / 6)}">${sp(n)}&lt;x${'&#10;'.repeat(n / 5)}</failure></testcase></testsuite>`,
  ],
  [
    'JUnit: a huge CDATA stack trace',
    quietly(parseJUnit),
    (n) => `<testsuite><testcase name="t"><failure><![CDATA[${']'.repeat(n)}x]]></failure></testcase></testsuite>`,
  ],
  ['JUnit: control characters and markup that never closes', quietly(parseJUnit), (n) => `<testsuite>${'<a\u0001'.repeat(n / 3)}`],
  [
    'JUnit: streamed in small pieces',
    (t) => {
      const parser = new JUnitStreamParser();
      for (let i = 0; i < t.length; i += 16) parser.write(t.slice(i, i + 16));
      return parser.end();
    },
    (n) => `<testsuite name="s">${'<testcase name="t"/>'.repeat(n / 20)}</testsuite>`,
  ],
  ['JUnit in the output: many lines that start a root', findJUnitInOutput, (n) => `${'<testsuite>\n'.repeat(n / 12)}</testsuite>`],
];

describe('the gate readers stay linear on adversarial output', () => {
  it.each(SHAPES)('%s', (_name, read, make) => {
    expectLinear(read, make);
  });
});
