/**
 * mocha's `json` reporter: one JSON document closing standard output, with `stats`, `tests`,
 * `passes`, `pending` and `failures`, each test named by its `fullTitle` (suite and test titles
 * joined with spaces, as the spec and TAP reporters name it). Pure.
 *
 * What tests print comes before the document, so the document is read from the last line that
 * opens one at the margin. A test can still print a whole document of its own last (from an exit
 * hook); a world that must not be gamed names a JUnit file.
 */
import type { TestCase, TestOutcome, TestRun } from '../cases.js';

interface MochaTest {
  fullTitle?: unknown;
  err?: { message?: unknown };
}

const titleOf = (test: MochaTest): string | null => (typeof test.fullTitle === 'string' ? test.fullTitle : null);
const isList = (value: unknown): value is MochaTest[] => Array.isArray(value) && value.every((t) => typeof t === 'object' && t !== null);

/** The reporter's document, or null when the output does not close with one. */
function documentOf(output: string): Record<string, unknown> | null {
  const text = output.trimEnd();
  if (!text.endsWith('}')) return null;
  // The reporter opens its document with `{` alone on a line; the last such line is its start.
  const start = text.lastIndexOf('\n{\n') + 1;
  if (!text.startsWith('{\n', start)) return null;
  try {
    const parsed = JSON.parse(text.slice(start)) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A run from mocha's JSON output, or null when the output does not close with its document. */
export function parseMochaJson(output: string): TestRun | null {
  const doc = documentOf(output);
  if (!doc || typeof doc.stats !== 'object' || !isList(doc.passes) || !isList(doc.failures) || !isList(doc.pending)) return null;
  const cases: TestCase[] = [];
  const add = (tests: MochaTest[], outcome: TestOutcome) => {
    for (const test of tests) {
      const name = titleOf(test);
      if (name === null) continue;
      const message = outcome === 'failed' && typeof test.err?.message === 'string' ? (test.err.message.split('\n')[0] ?? '').trim() : '';
      cases.push({ name, outcome, message, fileLevel: false });
    }
  };
  add(doc.passes, 'passed');
  add(doc.failures, 'failed');
  add(doc.pending, 'skipped');
  return { format: 'mocha', cases, summary: null };
}
