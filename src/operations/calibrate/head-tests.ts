import type { GateRecord } from '../../ledger/episode-record.js';

/**
 * How many tests the head's `test` step reported (passed, failed and skipped), or null when its
 * output could not be read as a report. Zero means the suite ran and found nothing to run (a
 * package published without its tests, whose runner's glob then matches no file): no mutant can be
 * caught by it, so calibration says so instead of gating mutants that could only survive. Pure.
 */
export function testsReported(record: GateRecord): number | null {
  const tests = record.steps.find((step) => step.name === 'test')?.tests;
  return tests ? tests.passed + tests.failed + tests.skipped : null;
}
