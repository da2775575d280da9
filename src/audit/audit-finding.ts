/**
 * What `genesis audit` reports. A violation breaks one of the world's invariants (the accepted
 * branch only holds verified trees, every episode is accounted for); a warning is worth a look but
 * breaks none (an episode still open because its run died, a test that passed only on a retry).
 */
export type AuditSeverity = 'violation' | 'warning';

/** Stable codes, one per rule, so scripts and tests can match on them. */
export type AuditCode =
  // The accepted history itself.
  | 'merge-commit'
  | 'unattributed-commit'
  | 'landed-twice'
  | 'task-landed-twice'
  | 'message-separator'
  | 'adoption-lost'
  // A commit against the episode behind it.
  | 'no-ledger-record'
  | 'ledger-mismatch'
  | 'tree-differs-from-candidate'
  | 'protected-path-changed'
  | 'outside-task-paths'
  | 'manifest-unreadable'
  // The ledger on its own.
  | 'ledger-record-unreadable'
  | 'accepted-not-on-branch'
  | 'episode-not-final'
  | 'episode-open'
  // The object store.
  | 'replace-ref'
  // Verifying the trees again.
  | 'reverify-failed'
  | 'reverify-flaky'
  | 'holdout-missing'
  | 'image-missing';

/** One thing the audit found. */
export interface AuditFinding {
  severity: AuditSeverity;
  code: AuditCode;
  /** One line for a person: what is wrong and where. */
  message: string;
  /** The accepted commit concerned, when there is one. */
  commit?: string;
  /** The episode concerned, when there is one. */
  episode?: string;
  /** What to do about it. */
  hint?: string;
  /** Evidence, several lines (the tail of a gate log). */
  detail?: string;
}

type Where = Pick<AuditFinding, 'commit' | 'episode' | 'hint' | 'detail'>;

/** A violation with the fields the checks always fill. */
export function violation(code: AuditCode, message: string, where: Where = {}): AuditFinding {
  return { severity: 'violation', code, message, ...where };
}

/** A warning with the fields the checks always fill. */
export function warning(code: AuditCode, message: string, where: Where = {}): AuditFinding {
  return { severity: 'warning', code, message, ...where };
}

/** Short commit names in messages, as `git log --oneline` prints them. */
export function short(commit: string): string {
  return commit.slice(0, 12);
}
