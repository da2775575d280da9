/**
 * Which of the runners in this folder printed the output: the one whose closing lines come last
 * (a command may run a build that prints one runner's lines, then the tests), provided they come
 * after `after`, the last line another reader claims. Pure.
 */
import type { TestRun } from '../cases.js';
import { cargoClosesAt, parseCargo } from './cargo.js';
import { goJsonClosesAt, parseGoJson } from './go-json.js';
import { parseMochaJson } from './mocha-json.js';
import { mochaSpecClosesAt, parseMochaSpec } from './mocha-spec.js';
import { printedLines } from './printed-lines.js';
import { parsePytest, pytestClosesAt } from './pytest.js';
import { parseUnittest, unittestClosesAt } from './unittest.js';

const READERS: ReadonlyArray<{ closesAt: (lines: readonly string[]) => number; parse: (output: string) => TestRun | null }> = [
  { closesAt: pytestClosesAt, parse: parsePytest },
  { closesAt: unittestClosesAt, parse: parseUnittest },
  { closesAt: cargoClosesAt, parse: parseCargo },
  { closesAt: goJsonClosesAt, parse: parseGoJson },
  { closesAt: mochaSpecClosesAt, parse: parseMochaSpec },
];

/** The run of the runner that closes the output after line `after`, or null when none does. */
export function parseClosingRunner(output: string, after: number): TestRun | null {
  // mocha's JSON reporter prints one document and nothing after it.
  const json = parseMochaJson(output);
  if (json) return json;
  const lines = printedLines(output);
  let best: { at: number; parse: (output: string) => TestRun | null } | null = null;
  for (const reader of READERS) {
    const at = reader.closesAt(lines);
    if (at > after && at > (best?.at ?? -1)) best = { at, parse: reader.parse };
  }
  return best ? best.parse(output) : null;
}
