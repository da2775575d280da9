import type { RejectionReason } from '../../errors/rejection-reasons.js';
import type { WorldManifest } from '../../manifest/schema.js';

/** Why the gate rejected a change the project itself had made: what to fix differs with each. */
export type RejectionCause =
  | 'network'
  | 'tool-missing'
  | 'timeout'
  | 'out-of-memory'
  | 'flaky'
  | 'report-unread'
  | 'deps'
  | 'genesis-rule'
  | 'base-fails'
  | 'tests-fail';

export interface RejectionFacts {
  reason: RejectionReason;
  message: string;
  /** The tail of the gate's log. */
  log: string;
  /** The same change passed when gated a second time. */
  passedOnRerun?: boolean;
  /** The failing step's only failures were its runner's per-test time limits (the gate ran it again with them raised). */
  perTestTimeouts?: boolean;
}

const NETWORK =
  /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|getaddrinfo|Could not resolve host|Network is unreachable|network unreachable)\b/i;
const TOOL = /(command not found|: not found$|spawn(Sync)? \S+ ENOENT|exec: \S+: not found|No such file or directory \(os error 2\)|exit(ed)? (code )?127\b)/im;
const RULES: ReadonlySet<RejectionReason> = new Set([
  'protected-path',
  'outside-paths',
  'tests-vanished',
  'size-limit',
  'symlink-escape',
  'unsafe-path',
  'reserved-name',
  'not-a-regular-file',
  'git-metadata',
  'score-fell',
]);
const REPORTS: ReadonlySet<RejectionReason> = new Set(['no-tests-ran', 'no-score', 'report-missing', 'report-invalid', 'report-too-large']);

/** The cause of one rejection, from its reason and log. Pure. */
export function classifyRejection(facts: RejectionFacts): RejectionCause {
  if (facts.reason === 'gate-timeout') return 'timeout';
  if (facts.reason === 'gate-oom') return 'out-of-memory';
  if (RULES.has(facts.reason)) return 'genesis-rule';
  if (REPORTS.has(facts.reason)) return 'report-unread';
  if (facts.reason === 'deps-failed') return NETWORK.test(facts.log) ? 'network' : 'deps';
  // A missing tool first: a parent that reached the network shows in the log of the base's re-run too.
  if (TOOL.test(facts.log)) return 'tool-missing';
  if (NETWORK.test(facts.log)) return 'network';
  if (facts.passedOnRerun) return 'flaky';
  if (facts.perTestTimeouts && facts.reason !== 'broken-base') return 'timeout';
  if (facts.reason === 'broken-base') return 'base-fails';
  return 'tests-fail';
}

/** What to change in world.yaml (or the project) for a cause, in the world's own terms. */
export function adviceFor(cause: RejectionCause, manifest: WorldManifest, reasons: readonly RejectionReason[]): string {
  const v = manifest.verify;
  switch (cause) {
    case 'network':
      return `gates run without a network: install what the tests fetch through verify.deps (files, install, paths: installed once with network${v.deps ? `; now "${v.deps.install}"` : ''}), or make the tests not reach out`;
    case 'tool-missing':
      return `a command the tests run is not in the gate: choose a verify.image that has it (now ${v.image}; with bwrap, the host's /usr), or install it through verify.deps`;
    case 'timeout': {
      const advice: string[] = [];
      if (reasons.includes('gate-timeout')) advice.push(`raise verify.timeoutSec (now ${v.timeoutSec}s for all steps), or make the suite faster`);
      if (reasons.some((r) => r !== 'gate-timeout'))
        advice.push(
          `tests ran out of their runner's own per-test limit, also when run again with it raised: raise that limit in the runner's config (vitest's and jest's testTimeout) or verify.limits.cpus (now ${v.limits.cpus}; docker enforces it), or make those tests faster`,
        );
      return advice.join('; ');
    }
    case 'out-of-memory':
      return `raise verify.limits.memoryMb (now ${v.limits.memoryMb})`;
    case 'flaky':
      return 'a test failed twice and then passed on a later gate: make it deterministic (time, order, ports, randomness); flaky tests also let wrong changes through';
    case 'report-unread':
      return `the gate could not count the tests: print TAP or a "N passed, N failed" line, or write JUnit XML and name it in verify.report.junit${v.report ? ` (now ${v.report.junit.join(', ')})` : ''}`;
    case 'deps':
      return `the dependency install failed: check verify.deps.install${v.deps ? ` ("${v.deps.install}")` : ''} and its files, or raise verify.deps.timeoutSec`;
    case 'genesis-rule':
      return ruleAdvice(reasons, manifest);
    case 'base-fails':
      return "the commit's parent fails the same way: the project's history was red there (nothing to change in world.yaml, or the gate misses a setup step: verify.setup)";
    case 'tests-fail':
      return "the project's tests fail on this commit in the gate: compare the log with the project's own CI (an environment variable, a locale, a file outside the tree), then set verify.setup or verify.test accordingly";
  }
}

function ruleAdvice(reasons: readonly RejectionReason[], manifest: WorldManifest): string {
  const parts: string[] = [];
  if (reasons.includes('protected-path'))
    parts.push(`the project changed paths protected: covers (${manifest.protected.join(', ')}): narrow protected: to what agents must never touch`);
  if (reasons.includes('tests-vanished'))
    parts.push(
      'tests that passed on the parent were no longer reported passing, and no file the commit edited defines them (a change may rename or remove the tests of files it edits): an agent would be rejected for it too; if the commit did edit their file, the gate did not find them there: see "tests-vanished" in docs/concepts.md',
    );
  if (reasons.includes('size-limit')) parts.push('the change is over verify.maxFileKb, maxChangeKb or maxFiles: raise them if such changes are normal here');
  if (reasons.includes('score-fell')) parts.push('fewer tests passed than on the parent: in ratchet mode a right change may not drop tests');
  if (parts.length === 0) parts.push(`a Genesis rule (${[...new Set(reasons)].join(', ')}) rejected the project's own change: see docs/guides/adopting.md`);
  return parts.join('; ');
}
