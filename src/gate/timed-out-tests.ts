/**
 * A test that failed only because it ran out of its runner's own per-test time (vitest's 5 s,
 * jest's, mocha's, node --test's `timeout`), which a loaded machine or a one-CPU sandbox causes
 * as often as a slow change does: run again on the same busy machine it times out again, and the
 * change is charged for the machine. Such a failure is run again with more CPUs and the runners'
 * limits raised (gate.ts), as is a step that ran out of the gate's own time. Pure.
 */
import { availableParallelism } from 'node:os';
import type { WorldManifest } from '../manifest/schema.js';
import type { TestReport } from './reports/printed-counts.js';

const TIMEOUT_MESSAGES = [
  /\bTest timed out in \d+\s*ms\b/i, // vitest
  /\bExceeded timeout of \d+\s*ms for a (?:test|hook)\b/i, // jest
  /\btest timed out after \d+\s*ms\b/i, // node --test
  /\bTimeout of \d+\s*ms exceeded\b/i, // mocha
  /\bFailed: Timeout >[\d.]+s\b/, // pytest-timeout
];

/** True when the step's report names failures and each of them is its runner's per-test timeout. */
export function onlyTimedOut(report: TestReport | null): boolean {
  const failures = report?.failures ?? [];
  return failures.length > 0 && failures.every((f) => TIMEOUT_MESSAGES.some((re) => re.test(f.message) || re.test(f.name)));
}

/**
 * How many times the runners' own per-test limits are raised for that run again: vitest's 5 s
 * becomes 20 s, still far inside a gate's time, so a test that hangs is still charged.
 */
export const TEST_TIMEOUT_FACTOR = 4;

/** How the record names that run again of a step, at the end of its name (calibrate reads it). */
export const PER_TEST_TIMEOUTS_NOTE = ': only per-test timeouts failed)';

/** How the record names the run again of a step that ran out of the gate's own time. */
export const GATE_TIMEOUT_NOTE = ": it ran out of the gate's time)";

/** The manifest with twice the CPUs (at most this machine's), for the run again of timed-out tests. */
export function withMoreCpus(manifest: WorldManifest, cores = availableParallelism()): WorldManifest {
  const cpus = Math.max(manifest.verify.limits.cpus, Math.min(manifest.verify.limits.cpus * 2, cores));
  return { ...manifest, verify: { ...manifest.verify, limits: { ...manifest.verify.limits, cpus } } };
}
