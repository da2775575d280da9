/**
 * What a failure means for whoever meets it, as data. Every error code and every rejection reason
 * carries one of these; code that must decide (retry? stop the run? count it against the task?)
 * looks the traits up instead of guessing from the string.
 */
export interface FailureTraits {
  /** Transient: the same thing tried again later can succeed (a daemon restarting, a branch that moved). */
  readonly retryable: boolean;
  /**
   * Stop the run: a configuration mistake or a broken machine that every next episode would meet
   * the same way (a missing image, bad credentials); a person must fix it.
   */
  readonly fatal: boolean;
  /** Counts against the episode: a failed attempt of its task in the ledger and the reliability figures. */
  readonly charged: boolean;
  /** One line for a person: what happened. */
  readonly summary: string;
}

/** A transient failure of the machine or a race: retried, never charged to the episode. */
export function transient(summary: string): FailureTraits {
  return { retryable: true, fatal: false, charged: false, summary };
}

/** A configuration mistake or a machine that cannot work: the run stops at once and says what to fix. */
export function fatal(summary: string): FailureTraits {
  return { retryable: false, fatal: true, charged: false, summary };
}

/** The episode's own failure: another, fresh attempt may do better, and this one counts against the task. */
export function charged(summary: string): FailureTraits {
  return { retryable: false, fatal: false, charged: true, summary };
}

/** Not charged, not retried, not fatal: a refusal of a person's command, or an outcome that is nobody's failure. */
export function refused(summary: string): FailureTraits {
  return { retryable: false, fatal: false, charged: false, summary };
}

/**
 * Why a table of traits is inconsistent, or an empty list. Retryable and fatal exclude each other
 * (a failure worth retrying does not stop the run), and neither is charged: a transient outage and
 * a configuration mistake are not the episode's failure.
 */
export function inconsistentTraits(table: Readonly<Record<string, FailureTraits>>): string[] {
  const problems: string[] = [];
  for (const [name, t] of Object.entries(table)) {
    if (t.retryable && t.fatal) problems.push(`${name}: both retryable and fatal`);
    if (t.charged && (t.retryable || t.fatal)) problems.push(`${name}: charged, yet ${t.retryable ? 'retryable' : 'fatal'}`);
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) problems.push(`${name}: not kebab-case`);
    if (t.summary.trim() === '') problems.push(`${name}: no summary`);
  }
  return problems;
}
