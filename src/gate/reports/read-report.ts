/**
 * Which report a gate step is judged by: the JUnit files named by `verify.report.junit`, else
 * JUnit XML printed on standard output, else what a runner printed: TAP, node's spec reporter, vitest's,
 * jest's, mocha's (spec, JSON), pytest's, unittest's or cargo test's own output.
 */
import { reportOf, type TestRun } from './cases.js';
import { readJUnitFiles, type ReportBudget, type ReportProblem } from './files.js';
import { findJUnitInOutput } from './junit.js';
import { summaryMismatch } from './runner-summary.js';
import { parseSpec } from './spec.js';
import { parseTap } from './tap.js';
import { endsWithVitest, parseVitest } from './vitest.js';
import { endsWithJest, parseJest } from './jest.js';
import { stripTerminalEscapes } from '../../ledger/terminal-text.js';
import { parseClosingRunner } from './runners/closing-runner.js';

export interface StepReportInput {
  /** The step's combined output (its tail when `truncated`). */
  output: string;
  truncated: boolean;
  /** The step's work dir, where report files are looked for. */
  workDir: string;
  /** `verify.report.junit` patterns, relative to the work dir; null when the world names none. */
  junit: readonly string[] | null;
  /** The named report must exist (the test step and task checks); other steps fall back to their output. */
  required: boolean;
  /** What the gate has left to read of report files (one per gate); a read of its own without it. */
  budget?: ReportBudget;
}

export type StepReport = { run: TestRun | null; source: string | null } | { problem: ReportProblem };

/** Reads one step's report; a named report that is missing (when required) or broken is a problem. */
export async function readStepReport(input: StepReportInput): Promise<StepReport> {
  if (input.junit && input.junit.length > 0) {
    const files = await readJUnitFiles(input.workDir, input.junit, input.budget);
    if ('run' in files) {
      const mismatch = summaryMismatch(input.output, reportOf(files.run));
      if (mismatch) return { problem: { reason: 'report-mismatch', message: mismatch } };
      return { run: files.run, source: files.files.join(', ') };
    }
    if (input.required || files.problem.reason !== 'report-missing') return { problem: files.problem };
  }
  const junit = findJUnitInOutput(input.output);
  if (junit) return { run: { ...junit, summary: null }, source: 'JUnit XML in the output' };
  const run = parseOutput(input.output, input.truncated);
  if (run?.tampered) return { problem: { reason: 'report-invalid', message: run.tampered } };
  return { run, source: run ? 'the output' : null };
}

const SPEC_END = /^ℹ tests \d+\s*$/;
const TAP_LINE = /^(?:TAP version \d+|1\.\.\d+|(?:not )?ok\b|# tests \d+)/;

/**
 * TAP, node's spec or vitest's output, told apart by which closes the output: the spec reporter prints
 * what tests write untouched (TAP lines included), the tap reporter escapes it as comments.
 */
export function parseOutput(output: string, truncated = false): TestRun | null {
  const lines = stripTerminalEscapes(output).split(/\r?\n/);
  const specEnd = lines.findLastIndex((l) => SPEC_END.test(l));
  const tapEnd = lines.findLastIndex((l) => TAP_LINE.test(l));
  if (endsWithVitest(lines, Math.max(specEnd, tapEnd))) return parseVitest(output);
  if (endsWithJest(lines, Math.max(specEnd, tapEnd))) return parseJest(output);
  const closing = parseClosingRunner(output, Math.max(specEnd, tapEnd));
  if (closing) return closing;
  if (specEnd > tapEnd) return parseSpec(output) ?? parseTap(output, truncated);
  return parseTap(output, truncated) ?? parseSpec(output);
}
