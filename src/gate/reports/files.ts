/**
 * The JUnit files a gate step wrote, found by the world's `verify.report.junit` patterns in the
 * step's work dir. Only regular files inside the work dir are read: a symlink (which could point
 * at a file of the host's) or anything too large is a broken report, not something to follow.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import picomatch from 'picomatch/posix.js';
import { lstatInside, passesLink } from '../../sandbox/gate/contained-path.js';
import { mergeRuns, type TestRun } from './cases.js';
import { JUnitFormatError, readJUnitFile, TooManyCasesError } from './junit-stream.js';
import type { RejectionReason } from '../../errors/rejection-reasons.js';

/** Why a named report could not be read: the gate's `report-missing` or `report-invalid`. */
export interface ReportProblem {
  reason: Extract<RejectionReason, 'report-missing' | 'report-invalid' | 'report-too-large' | 'report-mismatch' | 'runner-tampered'>;
  message: string;
}

const MAX_REPORT_BYTES = 32 * 1024 * 1024;
/** What one step's report files may hold together: each under MAX_REPORT_BYTES, twenty of them would not be. */
export const MAX_STEP_REPORT_BYTES = 48 * 1024 * 1024;
const MAX_ENTRIES = 20_000;
/** What the report files of one gate may hold in all its steps together (every task's check, a flaky step run again). */
export const MAX_GATE_REPORT_BYTES = 96 * 1024 * 1024;
/** Test cases one gate's reports may hold together: what they cost in memory until the verdict, whatever their bytes. */
export const MAX_GATE_REPORT_CASES = 1_000_000;

/**
 * What a gate has left to read of report files: one per gate, shared by its steps, so that no
 * number of steps or files makes the orchestrator hold more than the gate's limits.
 */
export class ReportBudget {
  constructor(
    public bytes = MAX_GATE_REPORT_BYTES,
    public cases = MAX_GATE_REPORT_CASES,
  ) {}
}

/** Work-dir-relative paths of the files under `base`, not following links to directories. */
async function listUnder(workDir: string, base: string): Promise<string[]> {
  const found: string[] = [];
  const pending = [base];
  while (pending.length > 0 && found.length < MAX_ENTRIES) {
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      // The static base of a glob, or a directory on its way, could be a link too; entries below are checked by their type.
      if (dir !== '' && !(await lstatInside(workDir, dir))?.isDirectory()) continue;
      entries = await readdir(join(workDir, dir), { withFileTypes: true });
    } catch {
      continue; // absent, or not a directory
    }
    for (const entry of entries) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) pending.push(path);
      else found.push(path);
    }
  }
  return found;
}

/** Paths matching any pattern: a plain path names one file; a glob is matched under its static base. */
export async function findReportFiles(workDir: string, patterns: readonly string[]): Promise<string[]> {
  const matches = new Set<string>();
  for (const pattern of patterns) {
    const scan = picomatch.scan(pattern);
    if (!scan.isGlob) {
      // Reached without following a link on the way (`reports -> /etc`): a link itself is found, and read as one.
      if ((await lstatInside(workDir, pattern)) || (await passesLink(workDir, pattern))) matches.add(pattern);
      continue;
    }
    const isMatch = picomatch(pattern, { dot: true });
    for (const path of await listUnder(workDir, scan.base)) if (isMatch(path)) matches.add(path);
  }
  return [...matches].sort();
}

async function readOne(workDir: string, path: string, budget: ReportBudget): Promise<TestRun | ReportProblem> {
  const full = join(workDir, path);
  const info = await lstatInside(workDir, path);
  if (!info) return { reason: 'report-invalid', message: `${path} is outside the work dir (through a symbolic link)` };
  if (!info.isFile()) {
    return {
      reason: 'report-invalid',
      message: `${path} is ${info.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; a report must be a file the test runner wrote`,
    };
  }
  // A directory on the way may be a link out of the work dir even when the file itself is not one.
  const real = await realpath(full).catch(() => full);
  if (
    relative(await realpath(workDir), real)
      .split(sep)
      .includes('..')
  )
    return { reason: 'report-invalid', message: `${path} is outside the work dir (through a symbolic link)` };
  if (info.size > MAX_REPORT_BYTES)
    return { reason: 'report-invalid', message: `${path} is ${info.size} bytes, over the ${MAX_REPORT_BYTES}-byte limit for a report` };
  try {
    // Read as a stream: only its cases are kept, never the document.
    const run = await readJUnitFile(full, budget.cases);
    budget.cases -= run.cases.length;
    return run;
  } catch (error) {
    if (error instanceof JUnitFormatError) return { reason: 'report-invalid', message: `${path} is ${error.message}` };
    if (error instanceof TooManyCasesError)
      return { reason: 'report-too-large', message: `${path} holds ${error.message}, over the ${MAX_GATE_REPORT_CASES} of one gate's reports together` };
    throw error;
  }
}

/**
 * Reads and merges every JUnit file the patterns match in `workDir`.
 * @returns the merged run, or the problem: no file matched (`report-missing`), one is not a
 *   readable JUnit document (`report-invalid`, naming the file and what is wrong), or the files
 *   are over the limits of one step or, with what the gate's steps read before, of one gate
 *   (`report-too-large`).
 */
export async function readJUnitFiles(
  workDir: string,
  patterns: readonly string[],
  /** The gate's (see ReportBudget); a call of its own by default. */
  budget = new ReportBudget(),
): Promise<{ run: TestRun; files: string[] } | { problem: ReportProblem }> {
  const files = await findReportFiles(workDir, patterns);
  if (files.length === 0) {
    return { problem: { reason: 'report-missing', message: `verify.report.junit names ${patterns.join(', ')}, and the step wrote no such file` } };
  }
  let total = 0;
  for (const path of files) total += (await lstatInside(workDir, path))?.size ?? 0;
  if (total > MAX_STEP_REPORT_BYTES)
    return {
      problem: {
        reason: 'report-too-large',
        message: `the ${files.length} report file(s) ${patterns.join(', ')} matched hold ${total} bytes together, over the ${MAX_STEP_REPORT_BYTES}-byte limit of one step`,
      },
    };
  if (total > budget.bytes)
    return {
      problem: {
        reason: 'report-too-large',
        message: `the ${files.length} report file(s) ${patterns.join(', ')} matched hold ${total} bytes, and this gate's steps have read ${MAX_GATE_REPORT_BYTES - budget.bytes} before: over the ${MAX_GATE_REPORT_BYTES}-byte limit of one gate's reports together`,
      },
    };
  budget.bytes -= total;
  // One step's reports are parsed at a time in this process: gates running side by side never hold more than one limit's worth.
  return parsing.run(async () => {
    const runs: TestRun[] = [];
    for (const path of files) {
      const read = await readOne(workDir, path, budget);
      if ('reason' in read) return { problem: read };
      // A file's attributes are a claim; another file's cases must not be topped up with it.
      runs.push({ ...read, summary: null });
    }
    return { run: mergeRuns(runs) as TestRun, files };
  });
}

/** Runs one task at a time, in the order asked. */
class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

const parsing = new OneAtATime();

/**
 * Removes what the patterns match before a step runs, so that only files the step itself writes
 * are read as its report (a candidate could commit a report that claims a thousand passes).
 * @returns the paths removed.
 */
export async function removeReportFiles(workDir: string, patterns: readonly string[]): Promise<string[]> {
  const files = await findReportFiles(workDir, patterns);
  // Only what is reached inside the work dir: rm removes a link itself, never what it points at.
  const removed: string[] = [];
  for (const path of files) {
    if (!(await lstatInside(workDir, path))) continue;
    await rm(join(workDir, path), { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}
