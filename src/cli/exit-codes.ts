/**
 * Exit codes of every command. `genesis run` has one per way it can stop, so a script can tell
 * "done" from "blocked" without parsing output.
 */
export const EXIT = {
  /** Success; for `run`: every task is done. */
  ok: 0,
  /** A GenesisError: bad input, a broken machine, a world that cannot be read. */
  error: 1,
  /** Wrong command-line usage. */
  usage: 2,
  /** `run`: stopped because tasks are blocked (they used up their attempts). */
  blocked: 3,
  /** `run`: stopped because a budget (episodes, time) ran out. */
  budget: 4,
  /** `run`: stopped by the user (SIGINT/SIGTERM); run again to resume. */
  interrupted: 5,
  /** `run`: stopped because the agent cannot work at all (circuit breaker); fix it and run again. */
  circuitOpen: 6,
  /** `run`: stopped because what is left waits for a person's review (`genesis review approve|reject`). */
  awaitingReview: 7,
  /** `run`: the goal's evidence command passes on the accepted head. */
  evidence: 0,
  /** An unexpected internal error (a bug). */
  internal: 70,
  /** `run`: a second SIGINT exited at once, without recording the running episodes. */
  forced: 130,
} as const;

/** The exit code of `genesis run` for each way it can stop. */
export const STOP_EXIT = {
  done: EXIT.ok,
  evidence: EXIT.evidence,
  blocked: EXIT.blocked,
  budget: EXIT.budget,
  interrupted: EXIT.interrupted,
  'circuit-open': EXIT.circuitOpen,
  'awaiting-review': EXIT.awaitingReview,
} as const;

/** What each exit code means to a script that calls Genesis: docs/reference/exit-codes.md is this table. */
export const EXIT_MEANINGS: Readonly<Record<keyof typeof EXIT, string>> = {
  ok: 'success; for `genesis run`: every task is done',
  error: 'a GenesisError: bad input, a broken machine, a world that cannot be read (the message ends with its code and what to do)',
  usage: 'wrong command-line usage (an unknown option, a missing argument)',
  blocked: '`genesis run` stopped because tasks are blocked (they used up their attempts); `genesis task retry` gives them new ones',
  budget: '`genesis run` stopped because a budget (episodes, hours, cost, tokens) ran out',
  interrupted: '`genesis run` was stopped by the user (SIGINT or SIGTERM); run it again to resume',
  circuitOpen: '`genesis run` stopped because the agent cannot work at all (the circuit breaker opened); fix the agent and run again',
  awaitingReview:
    '`genesis run` stopped because the changes left wait for review; `genesis review approve|reject` decides them, and the next run lands or retries them',
  evidence: "`genesis run` stopped because the goal's evidence command passes on the accepted head",
  internal: 'an unexpected internal error (a bug in Genesis); the accepted history is unchanged',
  forced: '`genesis run` got a second Ctrl-C and exited at once, without recording the running episodes (the next run closes them as abandoned)',
};
