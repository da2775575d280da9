/**
 * `cargo test`'s libtest output: one `running N tests` block per test binary, each test a line
 * `test tests::it_adds ... ok` (`FAILED`, `ignored`), failures' output under `---- tests::it_fails
 * stdout ----`, and a closing `test result: FAILED. 1 passed; 2 failed; 1 ignored; 0 measured; 0
 * filtered out; finished in 0.06s` per binary, which add up. `-q` prints dots instead of passing
 * names. Pure.
 *
 * A test is named by its module path with `::` read as ` > ` (`tests > it_fails`); its message is
 * the line after `panicked at …:`, the panic's own text. Counts come only from the result lines.
 */
import type { TestCase, TestOutcome, TestRun } from '../cases.js';
import { printedLines } from './printed-lines.js';

const RESULT = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out/;
const POINT = /^test (\S+) \.\.\. (ok|FAILED|ignored)/;
/** `-q`'s failure lines: `tests::it_fails --- FAILED`. */
const QUIET_FAILURE = /^(\S+) --- FAILED$/;
const OUTPUT_HEADER = /^---- (\S+) stdout ----$/;
const PANIC = /^thread '[^']*'(?: \(\d+\))? panicked at /;

const OUTCOME: Record<string, TestOutcome> = { ok: 'passed', FAILED: 'failed', ignored: 'skipped' };

const nameOf = (path: string): string => path.split('::').join(' > ');

/** Where the last libtest result line is, or -1. */
export function cargoClosesAt(lines: readonly string[]): number {
  return lines.findLastIndex((l) => RESULT.test(l));
}

/** A run from `cargo test`'s output, or null when it holds no result line. */
export function parseCargo(output: string): TestRun | null {
  const lines = printedLines(output);
  const summary = { passed: 0, failed: 0, skipped: 0 };
  const byName = new Map<string, TestCase>();
  const messages = new Map<string, string>();
  let results = 0;
  let current: string | null = null;
  for (const line of lines) {
    const result = RESULT.exec(line);
    if (result) {
      results += 1;
      summary.passed += Number(result[1]);
      summary.failed += Number(result[2]);
      summary.skipped += Number(result[3]);
      continue;
    }
    const point = POINT.exec(line);
    const quiet = point ? null : QUIET_FAILURE.exec(line);
    if (point || quiet) {
      const name = nameOf((point ?? quiet)?.[1] as string);
      byName.set(name, { name, outcome: point ? (OUTCOME[point[2] as string] as TestOutcome) : 'failed', message: '', fileLevel: false });
      continue;
    }
    const header = OUTPUT_HEADER.exec(line);
    if (header) current = nameOf(header[1] as string);
    else if (current !== null && PANIC.test(line)) {
      // Before Rust 1.73 the panic's text sat on the same line: `panicked at 'boom', src/lib.rs:13:22`.
      const inline = /panicked at '(.*)', \S+$/.exec(line);
      messages.set(current, inline ? (inline[1] as string) : '');
      if (inline) current = null;
    } else if (current !== null && messages.get(current) === '' && line.trim() !== '') {
      messages.set(current, line.trim());
      current = null;
    }
  }
  if (results === 0) return null;
  for (const [name, message] of messages) {
    const known = byName.get(name);
    if (known?.outcome === 'failed') known.message = message;
  }
  return { format: 'cargo', cases: [...byName.values()], summary };
}
