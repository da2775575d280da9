/** Exit codes of `genesis audit`, beside the shared ones (1 error, 2 usage); 7 is used by no other command. */
export const AUDIT_EXIT = {
  /** No violation (warnings may have been printed). */
  clean: 0,
  /** At least one invariant is broken; the report names each. */
  violations: 7,
} as const;
