import { matchesAny } from '../../../manifest/path-patterns.js';
import { mutationLanguageOf } from './languages.js';

/**
 * Paths calibration never mutates: the tests themselves (a mutant of a test measures nothing of the
 * gate), type tests (tsd's `.test-d.ts`, TSTyche's `.tst.ts`: the type checker runs them, not the
 * test command, so every mutant of one survives), and what is not the project's own source
 * (dependencies, coverage, docs, examples, benchmarks, virtual environments). Build output in the
 * tree (dist/) is mutated: only its lines the tests execute are chosen, so it counts only where it
 * is what the tests run, as in a package published with its compiled code and tests only. Pure.
 */
const NOT_SOURCE =
  /(^|\/)(test|tests|testing|__tests__|spec|example|examples|bench|benchmark|benchmarks|node_modules|coverage|docs|\.venv|venv|site-packages)\/|\.(test|spec|tst|test-d)\.[cm]?[jt]sx?$|(^|\/)(test_[^/]*|[^/]*_test|conftest|setup|noxfile)\.py$/;

/** Whether calibration leaves this path alone when it makes mutants (see NOT_SOURCE). */
export function isNotMutated(path: string): boolean {
  return NOT_SOURCE.test(path);
}

/**
 * Which reported paths are sources calibration mutates: files of the head's tree (the gate adds
 * files of its own to the work dir, its canary probe under .genesis-canary/, which the coverage run
 * reports too) in a language it mutates, neither left alone (isNotMutated) nor protected. Pure.
 */
export function mutableSources(headFiles: readonly string[], protectedPatterns: readonly string[]): (path: string) => boolean {
  const inHead = new Set(headFiles);
  return (path) => inHead.has(path) && mutationLanguageOf(path) !== undefined && !isNotMutated(path) && !matchesAny(path, protectedPatterns);
}
